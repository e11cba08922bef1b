/** The service logger as operators read it: credentials inside URLs never reach a line, whatever field carries them. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

describe('createLogger', () => {
  it('redacts URL credentials in any field, in error messages and stacks, and in child loggers', () => {
    const { logger, lines } = capture();
    const presigned =
      'https://bucket.s3.example/doc.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20260101&X-Amz-Signature=f00dfeed';
    logger
      .child({ component: 'storage' })
      .warn({ err: new Error(`GET ${presigned} failed`), location: presigned }, 'upload check failed');
    logger.info({ database: 'postgres://pressroom:hunter2-password@db:5432/pressroom' }, 'connecting');
    const text = lines.join('\n');
    for (const secret of ['AKIAEXAMPLE', 'f00dfeed', 'hunter2-password']) expect(text).not.toContain(secret);
    const [warning, info] = lines.map((l) => JSON.parse(l));
    expect(warning.location).toBe(
      'https://bucket.s3.example/doc.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]',
    );
    expect(warning.err.message).toContain('https://bucket.s3.example/doc.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256');
    expect(warning.component).toBe('storage');
    expect(info.database).toBe('postgres://pressroom:[redacted]@db:5432/pressroom');
  });

  it('leaves ordinary parameters and text alone', () => {
    const { logger, lines } = capture();
    logger.info({ url: '/v1/jobs?status=failed&limit=20', note: 'monkey=1; keyword=2' }, 'listed');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      url: '/v1/jobs?status=failed&limit=20',
      note: 'monkey=1; keyword=2',
    });
  });
});
