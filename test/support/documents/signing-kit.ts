/**
 * Signing certificates and a real RFC 3161 time-stamp authority for tests, made in the test with
 * OpenSSL (never committed keys): a CA, leaf certificates exported as PKCS#12 (valid, expired, or with
 * another key), and a TSA certificate (extendedKeyUsage critical timeStamping) behind a small
 * node:http server on loopback that answers each query with `openssl ts -reply`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const openssl = (args: string[], cwd: string): Buffer =>
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

/** A CA and what it issues, in a temporary directory removed by `close()`. */
export interface SigningKit {
  dir: string;
  caPem: string;
  /**
   * A PKCS#12 of a leaf issued by the CA for `days`, or expired in 2020, with `cn`; `mismatched`: the key
   * of another leaf beside this one's certificate; `key`: `openssl req` arguments of the leaf's key
   * (default `-newkey rsa:2048`); `exportArgs`: more `openssl pkcs12 -export` arguments (`-legacy`, `-iter`…);
   * `extension`: one more extension line for the leaf (`subjectAltName=DNS:a,DNS:b`).
   */
  pkcs12(options: {
    cn: string;
    password: string;
    days?: number;
    expired?: boolean;
    mismatched?: boolean;
    key?: string[];
    exportArgs?: string[];
    extension?: string;
  }): Buffer;
  close(): void;
}

export function createSigningKit(): SigningKit {
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-signing-'));
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '30',
      '-subj',
      '/CN=Pressroom Test CA',
    ],
    dir,
  );
  writeFileSync(
    join(dir, 'leaf.ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n',
  );
  let n = 0;
  return {
    dir,
    caPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    pkcs12({
      cn,
      password,
      days = 30,
      expired = false,
      mismatched = false,
      key = ['-newkey', 'rsa:2048'],
      exportArgs = [],
      extension,
    }) {
      const id = `leaf${n++}`;
      const extfile = extension === undefined ? 'leaf.ext' : `${id}.ext`;
      if (extension !== undefined)
        writeFileSync(join(dir, extfile), `${readFileSync(join(dir, 'leaf.ext'), 'utf8')}${extension}\n`);
      openssl(
        ['req', ...key, '-nodes', '-keyout', `${id}.key`, '-out', `${id}.csr`, '-subj', `/CN=${cn}/O=Pressroom Test`],
        dir,
      );
      // An expired certificate: backdated validity through OpenSSL 3's -not_before/-not_after is 3.4+; `ca` -startdate/-enddate works on 3.0.
      const validity = expired ? ['-days', '1'] : ['-days', String(days)];
      if (expired) {
        writeFileSync(join(dir, 'index.txt'), '');
        writeFileSync(join(dir, 'serial'), '1000\n');
        writeFileSync(
          join(dir, 'ca.cnf'),
          `[ca]\ndefault_ca=t\n[t]\ndir=${dir}\ndatabase=${dir}/index.txt\nserial=${dir}/serial\nnew_certs_dir=${dir}\ndefault_md=sha256\npolicy=p\nunique_subject=no\n[p]\ncommonName=supplied\norganizationName=optional\n`,
        );
        openssl(
          [
            'ca',
            '-batch',
            '-config',
            'ca.cnf',
            '-cert',
            'ca.crt',
            '-keyfile',
            'ca.key',
            '-in',
            `${id}.csr`,
            '-out',
            `${id}.crt`,
            '-startdate',
            '20200101000000Z',
            '-enddate',
            '20200201000000Z',
            '-extfile',
            'leaf.ext',
          ],
          dir,
        );
      } else {
        openssl(
          [
            'x509',
            '-req',
            '-in',
            `${id}.csr`,
            '-CA',
            'ca.crt',
            '-CAkey',
            'ca.key',
            '-CAcreateserial',
            '-out',
            `${id}.crt`,
            ...validity,
            '-extfile',
            extfile,
          ],
          dir,
        );
      }
      if (mismatched) {
        // `pkcs12 -export` refuses a certificate that does not match the key; as an extra certificate (-nocerts, -certfile) it takes it.
        openssl(
          [
            'req',
            '-newkey',
            'rsa:2048',
            '-nodes',
            '-keyout',
            `${id}-other.key`,
            '-out',
            `${id}-other.csr`,
            '-subj',
            '/CN=Someone else',
          ],
          dir,
        );
        return openssl(
          [
            'pkcs12',
            '-export',
            '-nocerts',
            '-inkey',
            `${id}-other.key`,
            '-certfile',
            `${id}.crt`,
            '-passout',
            `pass:${password}`,
          ],
          dir,
        );
      }
      return openssl(
        [
          'pkcs12',
          '-export',
          '-inkey',
          `${id}.key`,
          '-in',
          `${id}.crt`,
          '-certfile',
          'ca.crt',
          '-passout',
          `pass:${password}`,
          '-name',
          cn,
          ...exportArgs,
        ],
        dir,
      );
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A running TSA. `mode` changes how it answers: a real token, garbage bytes, or an answer that never comes. */
export interface TsaServer {
  url: string;
  /** The TSA's CA and certificate, for `openssl ts -verify`. */
  caFile: string;
  certFile: string;
  mode: 'ok' | 'garbage' | 'hang';
  requests: number;
  close(): Promise<void>;
}

/** OpenSSL's TSA configuration: the signer, its key, a serial file, and SHA-256. */
function tsaConfig(dir: string): string {
  return `[tsa]\ndefault_tsa=t\n[t]\ndir=${dir}\nserial=${dir}/tsaserial\nsigner_cert=${dir}/tsa.crt\ncerts=${dir}/tsaca.crt\nsigner_key=${dir}/tsa.key\nsigner_digest=sha256\ndefault_policy=1.2.3.4.1\ndigests=sha256,sha384,sha512\naccuracy=secs:1\ness_cert_id_alg=sha256\n`;
}

/** Starts a TSA on 127.0.0.1 with its own CA and certificate. */
export async function startTsaServer(): Promise<TsaServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-tsa-'));
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'tsaca.key',
      '-out',
      'tsaca.crt',
      '-days',
      '30',
      '-subj',
      '/CN=Pressroom Test TSA CA',
    ],
    dir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'tsa.key',
      '-out',
      'tsa.csr',
      '-subj',
      '/CN=Pressroom Test TSA',
    ],
    dir,
  );
  writeFileSync(
    join(dir, 'tsa.ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=critical,timeStamping\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'tsa.csr',
      '-CA',
      'tsaca.crt',
      '-CAkey',
      'tsaca.key',
      '-CAcreateserial',
      '-out',
      'tsa.crt',
      '-days',
      '30',
      '-extfile',
      'tsa.ext',
    ],
    dir,
  );
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  writeFileSync(join(dir, 'tsa.cnf'), tsaConfig(dir));
  let q = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      state.requests++;
      if (state.mode === 'hang') return; // never answers; the client's deadline ends it
      if (state.mode === 'garbage') {
        response
          .writeHead(200, { 'content-type': 'application/timestamp-reply' })
          .end(Buffer.from('this is not a time-stamp reply'));
        return;
      }
      const query = join(dir, `q${q++}.tsq`);
      writeFileSync(query, Buffer.concat(chunks));
      try {
        const reply = openssl(['ts', '-reply', '-config', 'tsa.cnf', '-queryfile', query], dir);
        response.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(reply);
      } catch (error) {
        response.writeHead(500).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: TsaServer = {
    url: `http://127.0.0.1:${port}/tsr`,
    caFile: join(dir, 'tsaca.crt'),
    certFile: join(dir, 'tsa.crt'),
    mode: 'ok',
    requests: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return state;
}
