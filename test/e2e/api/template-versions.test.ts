/**
 * Template versions over real HTTP with real Chromium, on SQLite and PostgreSQL: CRUD and validation,
 * `version` on pdf/create and create-async pins what renders (and an unknown one is a 404 that charges
 * nothing), a job queued for a version renders it after the draft changed, the older status path and
 * the AI-authoring 501.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

const page = (word: string) => `<html><body><p>Edition ${word} for {{ name }}</p></body></html>`;

describe.each(DIALECTS)('template versions on %s', (dialect) => {
  let t: TestApp;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };

  const newTemplate = async (html: string) =>
    (
      await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'Edition', html, sample_data: { name: 'Sample' } },
      })
    ).body.id as string;
  const versions = (id: string, apiKey = alice.apiKey) => t.request('GET', `/v1/templates/${id}/versions`, { apiKey });
  const addVersion = (id: string, body: unknown, apiKey = alice.apiKey) =>
    t.request('POST', `/v1/templates/${id}/versions`, { apiKey, body });
  const setDraft = (id: string, html: string) =>
    t.request('PUT', `/v1/templates/${id}`, { apiKey: alice.apiKey, body: { html } });
  const renderBinary = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/pdf/create', {
      apiKey: alice.apiKey,
      body: { export_type: 'binary', data: { name: 'Ada' }, ...body },
    });
  const ledgerSize = async () =>
    (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey: alice.apiKey })).body.transactions
      .length as number;
  const balance = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;

  beforeAll(async () => {
    // Workers are started by the test that needs them, after it has queued its job.
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' });
    alice = await t.createAccount({ credits: 50, plan: 'enterprise' });
    bob = await t.createAccount({ credits: 5, plan: 'enterprise' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates, lists (ascending, draft not listed), retags, describes and deletes versions; numbers are never reused', async () => {
    const id = await newTemplate(page('A'));
    expect((await versions(id)).body).toEqual({ versions: [] });

    const v1 = await addVersion(id, { tag: 'prod', description: 'First release' });
    expect(v1.status, JSON.stringify(v1.body)).toBe(200);
    expect(v1.body).toEqual({
      version_number: 1,
      tag: 'prod',
      description: 'First release',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const v2 = await addVersion(id, { tag: 'v2' });
    expect(v2.body).toMatchObject({ version_number: 2, tag: 'v2', description: null });
    expect((await versions(id)).body.versions.map((v: { version_number: number }) => v.version_number)).toEqual([1, 2]);

    const patched = await t.request('PATCH', `/v1/templates/${id}/versions/2`, {
      apiKey: alice.apiKey,
      body: { tag: 'staging', description: 'Try-out' },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ version_number: 2, tag: 'staging', description: 'Try-out' });
    const cleared = await t.request('PATCH', `/v1/templates/${id}/versions/2`, {
      apiKey: alice.apiKey,
      body: { description: null },
    });
    expect(cleared.body).toMatchObject({ tag: 'staging', description: null });

    expect((await t.request('DELETE', `/v1/templates/${id}/versions/2`, { apiKey: alice.apiKey })).body).toEqual({
      success: true,
    });
    expect((await t.request('DELETE', `/v1/templates/${id}/versions/2`, { apiKey: alice.apiKey })).body.error).toBe(
      'VERSION_NOT_FOUND',
    );
    expect((await addVersion(id, { tag: 'v3' })).body.version_number).toBe(3);
    expect((await versions(id)).body.versions.map((v: { tag: string }) => v.tag)).toEqual(['prod', 'v3']);
  });

  it('refuses bad tags and long descriptions (422), duplicate tags (409), unknown versions (404) and other accounts (403/404 as for templates)', async () => {
    const id = await newTemplate(page('A'));
    for (const tag of ['Prod', 'a', '-prod', 'prod-', 'with space', 'x'.repeat(51)]) {
      const res = await addVersion(id, { tag });
      expect(res.status, tag).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'tag']);
    }
    expect((await addVersion(id, {})).status).toBe(422);
    expect((await addVersion(id, { tag: 'ok', description: 'd'.repeat(501) })).status).toBe(422);
    expect((await addVersion(id, { tag: 'ok', description: 'd'.repeat(500) })).status).toBe(200);

    const dup = await addVersion(id, { tag: 'ok' });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: 'VERSION_TAG_EXISTS', message: expect.stringContaining('"ok"') });
    await addVersion(id, { tag: 'other' });
    const stolen = await t.request('PATCH', `/v1/templates/${id}/versions/2`, {
      apiKey: alice.apiKey,
      body: { tag: 'ok' },
    });
    expect(stolen.status).toBe(409);
    expect(stolen.body.error).toBe('VERSION_TAG_EXISTS');
    // A tag moves by an explicit PATCH once its holder gave it up.
    await t.request('PATCH', `/v1/templates/${id}/versions/1`, { apiKey: alice.apiKey, body: { tag: 'old' } });
    expect(
      (await t.request('PATCH', `/v1/templates/${id}/versions/2`, { apiKey: alice.apiKey, body: { tag: 'ok' } })).body,
    ).toMatchObject({ version_number: 2, tag: 'ok' });

    expect(
      (await t.request('PATCH', `/v1/templates/${id}/versions/99`, { apiKey: alice.apiKey, body: { tag: 'zz' } })).body
        .error,
    ).toBe('VERSION_NOT_FOUND');
    expect((await versions(id, bob.apiKey)).body.error).toBe('FORBIDDEN');
    expect((await addVersion(id, { tag: 'mine' }, bob.apiKey)).body.error).toBe('FORBIDDEN');
    expect((await t.request('DELETE', `/v1/templates/${id}/versions/1`, { apiKey: bob.apiKey })).body.error).toBe(
      'FORBIDDEN',
    );
    expect((await versions('nonexistent1')).status).toBe(404);
    expect((await versions(id)).body.versions).toHaveLength(2);
  });

  it('renders the snapshot named by tag or number, the draft without version, and charges nothing for an unknown version', async () => {
    const id = await newTemplate(page('Alpha'));
    await addVersion(id, { tag: 'prod' });
    expect((await setDraft(id, page('Bravo'))).status).toBe(200);

    for (const version of ['prod', '1', 1]) {
      const res = await renderBinary({ template_id: id, version });
      expect(res.status, JSON.stringify(version)).toBe(200);
      expect(pdfText(res.bytes)).toContain('Edition Alpha for Ada');
    }
    const draft = await renderBinary({ template_id: id });
    expect(pdfText(draft.bytes)).toContain('Edition Bravo for Ada');

    const credits = await balance();
    const entries = await ledgerSize();
    for (const path of ['/v1/pdf/create', '/v1/pdf/create-async']) {
      const res = await t.request('POST', path, {
        apiKey: alice.apiKey,
        body: { template_id: id, data: {}, version: 'nope' },
      });
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ error: 'VERSION_NOT_FOUND', message: expect.stringContaining('nope') });
    }
    expect(
      (
        await t.request('POST', '/v1/pdf/create', {
          apiKey: alice.apiKey,
          body: { template_id: id, data: {}, version: 'x'.repeat(51) },
        })
      ).status,
    ).toBe(422);
    expect(await balance()).toBe(credits);
    expect(await ledgerSize()).toBe(entries);

    // Deleting the template deletes its versions.
    await t.request('DELETE', `/v1/templates/${id}`, { apiKey: alice.apiKey });
    const rows = await t.services.database.db
      .selectFrom('template_versions')
      .selectAll()
      .where('template_id', '=', id)
      .execute();
    expect(rows).toEqual([]);
  });

  it('reads one version with its snapshot, and previews a version (free) while the draft says something else', async () => {
    const id = await newTemplate(page('Alpha'));
    await t.request('PUT', `/v1/templates/${id}`, {
      apiKey: alice.apiKey,
      body: { css: 'p { color: red; }', page: { format: 'A5', footer_html: '<span>Foot A</span>' } },
    });
    await addVersion(id, { tag: 'prod', description: 'First' });
    await t.request('PUT', `/v1/templates/${id}`, {
      apiKey: alice.apiKey,
      body: { html: page('Bravo'), css: null, page: null, sample_data: { name: 'Changed' } },
    });

    const one = await t.request('GET', `/v1/templates/${id}/versions/1`, { apiKey: alice.apiKey });
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body).toMatchObject({
      version_number: 1,
      tag: 'prod',
      description: 'First',
      name: 'Edition',
      html: page('Alpha'),
      css: 'p { color: red; }',
      sample_data: { name: 'Sample' },
    });
    expect(one.body.page).toMatchObject({ format: 'A5', footer_html: '<span>Foot A</span>' });
    expect(one.body.fields.map((f: { key: string }) => f.key)).toEqual(['name']);
    expect((await t.request('GET', `/v1/templates/${id}/versions/2`, { apiKey: alice.apiKey })).body.error).toBe(
      'VERSION_NOT_FOUND',
    );
    expect((await t.request('GET', `/v1/templates/${id}/versions/1`, { apiKey: bob.apiKey })).body.error).toBe(
      'FORBIDDEN',
    );

    const credits = await balance();
    const entries = await ledgerSize();
    const preview = (body: Record<string, unknown>, apiKey = alice.apiKey) =>
      t.request('POST', '/v1/templates/preview', { apiKey, body });
    // Without data, the version's own sample data fills it.
    const v1 = await preview({ template_id: id, version: 'prod' });
    expect(v1.status, v1.bytes.toString()).toBe(200);
    expect(v1.headers.get('content-type')).toBe('application/pdf');
    const v1Text = pdfText(v1.bytes);
    expect(v1Text).toContain('Edition Alpha for Sample');
    expect(v1Text).toContain('Foot A');
    expect(v1Text).not.toContain('Bravo');

    expect((await preview({ template_id: id, version: 'nope' })).body).toEqual({
      error: 'VERSION_NOT_FOUND',
      message: expect.stringContaining('nope'),
    });
    expect((await preview({ template_id: id, version: 1 }, bob.apiKey)).body.error).toBe('FORBIDDEN');
    const mixed = await preview({ template_id: id, version: 1, html: '<p>x</p>' });
    expect(mixed.status).toBe(422);
    expect(mixed.body.detail[0].loc).toEqual(['body', 'html']);
    const orphan = await preview({ html: '<p>x</p>', version: 'prod' });
    expect(orphan.status).toBe(422);
    expect(orphan.body.detail[0].loc).toEqual(['body', 'version']);
    const empty = await preview({ data: {} });
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({ loc: ['body', 'html'], type: 'missing' });
    expect(await balance()).toBe(credits);
    expect(await ledgerSize()).toBe(entries);
  });

  it('a job queued for a version renders it after the draft and the tags changed; the job shows the version; the status path answers like the jobs path', async () => {
    const id = await newTemplate(page('Alpha'));
    await addVersion(id, { tag: 'prod' });
    const queued = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: alice.apiKey,
      body: { template_id: id, data: { name: 'Ada' }, version: 'prod' },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const draftJob = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: alice.apiKey,
      body: { template_id: id, data: { name: 'Ada' } },
    });
    const jobId = queued.body.job_id as string;
    expect((await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey: alice.apiKey })).body).toMatchObject({
      status: 'pending',
      version: { number: 1, tag: 'prod' },
    });

    // Before any worker runs: the draft changes, and "prod" moves to a new version of the new text.
    await setDraft(id, page('Bravo'));
    await t.request('PATCH', `/v1/templates/${id}/versions/1`, { apiKey: alice.apiKey, body: { tag: 'old' } });
    await addVersion(id, { tag: 'prod' });
    t.services.startWorkers();

    const done = await until(
      async () => {
        const res = await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey: alice.apiKey });
        return res.body.status === 'completed' || res.body.status === 'failed' ? res.body : undefined;
      },
      60_000,
      'versioned job finished',
    );
    expect(done).toMatchObject({ status: 'completed', version: { number: 1, tag: 'prod' } });
    const link = new URL(done.result_url);
    expect(pdfText((await t.request('GET', `${link.pathname}${link.search}`)).bytes)).toContain(
      'Edition Alpha for Ada',
    );

    const draftDone = await until(
      async () => {
        const res = await t.request('GET', `/v1/pdf/jobs/${draftJob.body.job_id}`, { apiKey: alice.apiKey });
        return res.body.status === 'completed' ? res.body : undefined;
      },
      60_000,
      'draft job finished',
    );
    expect(draftDone.version).toBeNull();
    const draftLink = new URL(draftDone.result_url);
    expect(pdfText((await t.request('GET', `${draftLink.pathname}${draftLink.search}`)).bytes)).toContain(
      'Edition Bravo for Ada',
    );

    const viaStatus = await t.request('GET', `/v1/pdf/status/${jobId}`, { apiKey: alice.apiKey });
    const viaJobs = await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey: alice.apiKey });
    expect(viaStatus.status).toBe(200);
    expect(viaStatus.body).toEqual(viaJobs.body);
    const listed = (await t.request('GET', '/v1/pdf/jobs?limit=100', { apiKey: alice.apiKey })).body.jobs.find(
      (j: { id: string }) => j.id === jobId,
    );
    expect(listed).toEqual(viaJobs.body);
    const missing = await t.request('GET', '/v1/pdf/status/00000000-0000-0000-0000-000000000000', {
      apiKey: alice.apiKey,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('JOB_NOT_FOUND');
    expect((await t.request('GET', `/v1/pdf/status/${jobId}`, { apiKey: bob.apiKey })).status).toBe(404);
  });

  it('answers 501 NOT_IMPLEMENTED for AI authoring under /v1/agent, whatever the method, after the key (401 without one)', async () => {
    const paths = [
      ['POST', '/v1/agent/templates'],
      ['GET', '/v1/agent/jobs/j1'],
      ['POST', '/v1/agent/templates/t1/revise'],
      ['POST', '/v1/agent/generate'],
      ['GET', '/v1/agent/sessions/abc'],
      ['PUT', '/v1/agent'],
      ['DELETE', '/v1/agent/x'],
    ] as const;
    for (const [method, path] of paths) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : { prompt: 'an invoice' };
      const res = await t.request(method, path, { apiKey: alice.apiKey, body });
      expect(res.status, `${method} ${path}`).toBe(501);
      expect(res.body).toEqual({ error: 'NOT_IMPLEMENTED', message: expect.stringContaining('language model') });
      for (const apiKey of [undefined, `pr_${'x'.repeat(48)}`]) {
        const refused = await t.request(method, path, { apiKey, body });
        expect(refused.status, `${method} ${path} without a valid key`).toBe(401);
        expect(refused.body.error).toBe('UNAUTHORIZED');
      }
    }
  });
});
