/**
 * Versions stay frozen when an asset is replaced (issue 50), over real HTTP with real Chromium, on
 * SQLite and PostgreSQL: an upload under an existing name adds a revision and says it replaced one;
 * a published version prints the revision it was published with — sync, preview, job and image —
 * and the draft the newest (read back with pdftotext: the two logos are SVGs with different words;
 * the image's swatch by its pixels); `GET /v1/assets/{name}` with
 * `Accept: application/json` lists the revisions and the versions printing each; a name a version
 * prints cannot be deleted; a revision no version prints goes, and the quota counts every kept one,
 * exactly under concurrent uploads; a version published while uploads run keeps its revision; no
 * account sees another's revisions.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { countPixels, decodePng, solidPng } from '../../support/documents/image-tools.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { completedJobPdf, startTestApp, type TestApp } from '../../support/test-app.js';

/** An SVG logo whose word pdftotext reads back from the PDF. */
const logo = (word: string, pad = 0) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="40"><text x="4" y="28" font-family="sans-serif" font-size="24">${word}</text><!--${'x'.repeat(pad)}--></svg>`,
  );
const b64 = (bytes: Buffer) => bytes.toString('base64');
const BRANDED = `<p>Branded</p><img src="{{ asset('logo.svg') }}" width="300" height="40">`;
const JSON_ACCEPT = { accept: 'application/json' };

describe.each(DIALECTS)('asset revisions on %s', (dialect) => {
  let t: TestApp;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };

  const upload = (name: string, bytes: Buffer, apiKey = alice.apiKey) =>
    t.request('POST', '/v1/assets', { apiKey, body: { name, content_base64: b64(bytes) } });
  const newTemplate = async (name: string, html: string, apiKey = alice.apiKey) => {
    const res = await t.request('POST', '/v1/templates', { apiKey, body: { name, html } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const publish = async (id: string, tag: string, apiKey = alice.apiKey) => {
    const res = await t.request('POST', `/v1/templates/${id}/versions`, { apiKey, body: { tag } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.version_number as number;
  };
  const render = async (body: Record<string, unknown>, apiKey = alice.apiKey) => {
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { export_type: 'binary', data: {}, ...body },
    });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    return {
      text: pdfText(res.bytes),
      warnings: JSON.parse(res.headers.get('x-pressroom-warning-details') ?? '[]') as {
        code: string;
        message: string;
      }[],
    };
  };
  /** A GET whose path goes on the wire exactly as written. */
  const rawGet = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(t.baseUrl);
      const req = httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end();
    });
  const describeAsset = (name: string, apiKey = alice.apiKey) =>
    t.request('GET', `/v1/assets/${name}`, { apiKey, headers: JSON_ACCEPT });

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    alice = await t.createAccount({ credits: 100, plan: 'enterprise' });
    bob = await t.createAccount({ credits: 20, plan: 'enterprise' });
  }, 180_000);
  afterAll(async () => t?.close());

  it('a published version prints the logo it was published with, the draft the new one; the upload says it replaced it and who uses it', async () => {
    const first = await upload('logo.svg', logo('ALPHA'));
    expect(first.status, JSON.stringify(first.body)).toBe(201);

    const branded = await newTemplate('Branded', BRANDED);
    const letter = await newTemplate('Letter', `<p>Letter</p><img src="{{ asset('logo.svg') }}">`);
    const footer = await newTemplate(
      'Footer',
      `<p>Footer</p><div style="background: url('{{ asset("logo.svg") }}')">x</div>`,
    );
    await newTemplate('Plain', '<p>No logo</p>');
    expect(await publish(branded, 'v1')).toBe(1);
    expect((await render({ template_id: branded, version: 'v1' })).text).toContain('ALPHA');

    const second = await upload('logo.svg', logo('BRAVO'));
    expect(second.status, JSON.stringify(second.body)).toBe(201);

    // The version is frozen; the draft (no version) prints the newest; so do a version's preview and a new version.
    const v1 = await render({ template_id: branded, version: 'v1' });
    expect(v1.text).toContain('ALPHA');
    expect(v1.text).not.toContain('BRAVO');
    expect(v1.warnings).toEqual([]);
    const draft = await render({ template_id: branded });
    expect(draft.text).toContain('BRAVO');
    expect(draft.text).not.toContain('ALPHA');

    // Both answers say what they did: a first revision, then a replacement, and who uses the name.
    expect(first.body).toMatchObject({ name: 'logo.svg', revision: 1, replaced: false, used_by: [] });
    expect(second.body).toMatchObject({
      name: 'logo.svg',
      content_type: 'image/svg+xml',
      size: logo('BRAVO').length,
      revision: 2,
      replaced: true,
      created_at: first.body.created_at,
    });
    expect(second.body.used_by).toEqual([
      {
        template_id: branded,
        template_name: 'Branded',
        draft: true,
        versions: [{ version_number: 1, tag: 'v1', revision: 1 }],
        computed: false,
      },
      { template_id: footer, template_name: 'Footer', draft: true, versions: [], computed: false },
      { template_id: letter, template_name: 'Letter', draft: true, versions: [], computed: false },
    ]);

    const preview = await t.request('POST', '/v1/templates/preview', {
      apiKey: alice.apiKey,
      body: { template_id: branded, version: 'v1' },
    });
    expect(preview.status).toBe(200);
    expect(pdfText(preview.bytes)).toContain('ALPHA');
    const job = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: alice.apiKey,
      body: { template_id: branded, version: 'v1', data: {} },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect(pdfText(await completedJobPdf(t, alice.apiKey, job.body.job_id, 120_000))).toContain('ALPHA');
    expect(await publish(branded, 'v2')).toBe(2);
    expect((await render({ template_id: branded, version: 'v2' })).text).toContain('BRAVO');

    // The name's description: every kept revision, newest first, with the versions printing each.
    const described = await describeAsset('logo.svg');
    expect(described.status, JSON.stringify(described.body)).toBe(200);
    expect(described.headers.get('content-type')).toContain('application/json');
    expect(described.body).toMatchObject({ name: 'logo.svg', revision: 2 });
    expect(described.body.revisions).toEqual([
      {
        revision: 2,
        content_type: 'image/svg+xml',
        size: logo('BRAVO').length,
        sha256: second.body.sha256,
        created_at: expect.any(String),
        current: true,
        used_by: [{ template_id: branded, template_name: 'Branded', version_number: 2, tag: 'v2' }],
      },
      {
        revision: 1,
        content_type: 'image/svg+xml',
        size: logo('ALPHA').length,
        sha256: first.body.sha256,
        created_at: expect.any(String),
        current: false,
        used_by: [{ template_id: branded, template_name: 'Branded', version_number: 1, tag: 'v1' }],
      },
    ]);
    // Without asking for JSON: the bytes, as before revisions; `?revision=` picks one.
    const bytes = await t.request('GET', '/v1/assets/logo.svg', { apiKey: alice.apiKey });
    expect(bytes.headers.get('content-type')).toBe('image/svg+xml');
    expect(bytes.bytes.equals(logo('BRAVO'))).toBe(true);
    expect(
      (
        await t.request('GET', '/v1/assets/logo.svg?revision=1', { apiKey: alice.apiKey, headers: JSON_ACCEPT })
      ).bytes.equals(logo('ALPHA')),
    ).toBe(true);
    const listed = (await t.request('GET', '/v1/assets', { apiKey: alice.apiKey })).body.assets as {
      name: string;
      used_by: { template_name: string }[];
    }[];
    expect(listed.find((a) => a.name === 'logo.svg')!.used_by.map((u) => u.template_name)).toEqual([
      'Branded',
      'Footer',
      'Letter',
    ]);
  });

  it('a name a published version prints is not deleted (409 naming the version); deleting the version lets its revision go', async () => {
    await upload('seal.svg', logo('SEAL-ONE'));
    const id = await newTemplate('Sealed', `<img src="{{ asset('seal.svg') }}" width="300" height="40">`);
    await publish(id, 'sealed-v1');
    await upload('seal.svg', logo('SEAL-TWO'));
    // A third upload: revision 2 was printed by no version, so it goes; revision 1 stays for sealed-v1.
    await upload('seal.svg', logo('SEAL-THREE'));
    // The very bytes it has already: no new revision, nothing replaced.
    expect((await upload('seal.svg', logo('SEAL-THREE'))).body).toMatchObject({ revision: 3, replaced: false });
    expect((await describeAsset('seal.svg')).body.revisions.map((r: { revision: number }) => r.revision)).toEqual([
      3, 1,
    ]);

    const refused = await t.request('DELETE', '/v1/assets/seal.svg', { apiKey: alice.apiKey });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'ASSET_IN_USE',
      message: expect.stringContaining(`"Sealed" sealed-v1 (template ${id})`),
    });
    expect(refused.body.message).toContain('Nothing was deleted');
    expect((await render({ template_id: id, version: 'sealed-v1' })).text).toContain('SEAL-ONE');

    expect((await t.request('DELETE', `/v1/templates/${id}/versions/1`, { apiKey: alice.apiKey })).status).toBe(200);
    expect((await describeAsset('seal.svg')).body.revisions.map((r: { revision: number }) => r.revision)).toEqual([3]);
    expect((await t.request('GET', '/v1/assets/seal.svg?revision=1', { apiKey: alice.apiKey })).status).toBe(404);
    expect((await t.request('DELETE', '/v1/assets/seal.svg', { apiKey: alice.apiKey })).body).toEqual({
      success: true,
    });
  });

  it('a template that computes its asset name pins every asset; a name uploaded after publishing is missing from the version, saying why', async () => {
    await upload('brand/mark.svg', logo('MARK-OLD'));
    const id = await newTemplate(
      'Computed',
      `<img src="{{ asset(logo) }}" width="300" height="40"><img src="{{ asset('later.svg') }}" width="300" height="40">`,
    );
    await publish(id, 'c1');
    await upload('brand/mark.svg', logo('MARK-NEW'));
    await upload('later.svg', logo('LATER'));
    const version = await render({ template_id: id, version: 'c1', data: { logo: 'brand/mark.svg' } });
    expect(version.text).toContain('MARK-OLD');
    expect(version.text).not.toContain('LATER');
    expect(version.warnings).toEqual([
      {
        code: 'ASSET_NOT_FOUND',
        message: expect.stringContaining(
          'This version of the template was published without an asset named "later.svg"',
        ),
        url: 'https://assets.pressroom.internal/a/later.svg',
      },
    ]);
    const draft = await render({ template_id: id, data: { logo: 'brand/mark.svg' } });
    expect(draft.text).toContain('MARK-NEW');
    expect(draft.text).toContain('LATER');
    expect((await describeAsset('brand/mark.svg')).body.used_by).toEqual([
      {
        template_id: id,
        template_name: 'Computed',
        draft: true,
        versions: [{ version_number: 1, tag: 'c1', revision: 1 }],
        computed: true,
      },
    ]);
    // Deleting the template takes its versions, and the revisions only they printed.
    expect((await t.request('DELETE', `/v1/templates/${id}`, { apiKey: alice.apiKey })).status).toBe(200);
    const after = (await describeAsset('brand/mark.svg')).body;
    expect(after.revisions.map((r: { revision: number }) => r.revision)).toEqual([2]);
    expect(after.used_by.map((u: { template_id: string }) => u.template_id)).not.toContain(id);
  });

  it("a version's header prints the logo it was published with (the header is inlined, not loaded)", async () => {
    await upload('head.svg', logo('HEAD-ONE'));
    const res = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: {
        name: 'Headed',
        html: '<p>Body</p>',
        page: { header_html: `<img src="{{ asset('head.svg') }}" width="300" height="40">`, margin: { top: '30mm' } },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await publish(res.body.id, 'h1');
    await upload('head.svg', logo('HEAD-TWO'));
    expect((await render({ template_id: res.body.id, version: 'h1' })).text).toContain('HEAD-ONE');
    expect((await render({ template_id: res.body.id })).text).toContain('HEAD-TWO');
  });

  it("an image template's version prints its swatch as published; image/create of the draft the new one", async () => {
    await upload('swatch.png', solidPng(40, 40, [255, 0, 0]));
    const res = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: {
        name: 'Swatch',
        kind: 'image',
        canvas: { width: 40, height: 40 },
        html: `<img src="{{ asset('swatch.png') }}" style="display:block;width:40px;height:40px">`,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await publish(res.body.id, 's1');
    await upload('swatch.png', solidPng(40, 40, [0, 0, 255]));
    const picture = async (body: Record<string, unknown>) => {
      const image = await t.request('POST', '/v1/image/create', {
        apiKey: alice.apiKey,
        body: { template_id: res.body.id, export_type: 'binary', ...body },
      });
      expect(image.status, image.bytes.toString('utf8', 0, 300)).toBe(200);
      const png = decodePng(image.bytes);
      return {
        red: countPixels(png, ([r, g, b]) => r > 200 && g < 60 && b < 60),
        blue: countPixels(png, ([r, g, b]) => b > 200 && r < 60 && g < 60),
        all: png.width * png.height,
      };
    };
    const version = await picture({ version: 's1' });
    expect(version.red).toBeGreaterThan(version.all / 2);
    expect(version.blue).toBe(0);
    const draft = await picture({});
    expect(draft.blue).toBeGreaterThan(draft.all / 2);
    expect(draft.red).toBe(0);
  });

  it("no account sees another's revisions or users, and another account's version prints its own asset", async () => {
    await upload('shared-name.svg', logo('ALICE-ONE'));
    const alices = await newTemplate('Alice', `<img src="{{ asset('shared-name.svg') }}" width="300" height="40">`);
    await publish(alices, 'a1');
    await upload('shared-name.svg', logo('ALICE-TWO'));

    for (const path of [
      '/v1/assets/shared-name.svg',
      '/v1/assets/shared-name.svg?revision=1',
      '/v1/assets/shared-name.svg?revision=2',
    ]) {
      for (const headers of [JSON_ACCEPT, {}]) {
        const res = await t.request('GET', path, { apiKey: bob.apiKey, headers });
        expect(res.status, path).toBe(404);
        expect(res.body.error).toBe('NOT_FOUND');
      }
    }
    expect((await t.request('DELETE', '/v1/assets/shared-name.svg', { apiKey: bob.apiKey })).status).toBe(404);
    // Bob's own file under the same name is his revision 1, used by his template only.
    const bobs = await upload('shared-name.svg', logo('BOB-ONE'), bob.apiKey);
    expect(bobs.body).toMatchObject({ revision: 1, replaced: false, used_by: [] });
    const bobTemplate = await newTemplate(
      'Bob',
      `<img src="{{ asset('shared-name.svg') }}" width="300" height="40">`,
      bob.apiKey,
    );
    await publish(bobTemplate, 'b1', bob.apiKey);
    expect((await render({ template_id: bobTemplate, version: 'b1' }, bob.apiKey)).text).toContain('BOB-ONE');
    expect((await render({ template_id: alices, version: 'a1' })).text).toContain('ALICE-ONE');
    const bobView = await describeAsset('shared-name.svg', bob.apiKey);
    expect(bobView.body.revisions.map((r: { revision: number }) => r.revision)).toEqual([1]);
    expect(bobView.body.used_by.map((u: { template_id: string }) => u.template_id)).toEqual([bobTemplate]);
    // Alice's version of the same name is untouched by Bob's upload.
    expect(
      (await describeAsset('shared-name.svg')).body.revisions.map((r: { revision: number }) => r.revision),
    ).toEqual([2, 1]);
  });

  it('refuses a revision that is not a positive integer (422) and names that are not names, in the documented shape', async () => {
    for (const query of ['0', '-1', 'abc', '1.5', '99999999999']) {
      const res = await t.request('GET', `/v1/assets/logo.svg?revision=${query}`, { apiKey: alice.apiKey });
      expect(res.status, query).toBe(422);
      expect(res.body.detail[0].loc, query).toEqual(['query', 'revision']);
    }
    // Sent as written (fetch would resolve `%2e%2e` itself): the service must refuse them, not resolve them.
    for (const path of [
      '/v1/assets/a/%2e%2e/logo.svg',
      '/v1/assets/a/../logo.svg',
      '/v1/assets/a//b.svg',
      `/v1/assets/${'x'.repeat(201)}`,
      `/v1/assets/${'x'.repeat(10_000)}`,
      '/v1/assets/a%00b.svg',
      '/v1/assets/a%0d%0ab.svg',
      '/v1/assets/logo.svg%2f',
    ]) {
      for (const query of ['', '?revision=1']) {
        const res = await rawGet(`${path}${query}`, { 'x-api-key': alice.apiKey, ...JSON_ACCEPT });
        expect(res.status, path).toBe(422);
        expect(JSON.parse(res.body).detail[0].loc, path).toEqual(['path', 'name']);
      }
    }
  });
});

/** Every kept revision counts against the account's quota, exactly under concurrency (HARDENING "Money and quotas"). */
describe.each(DIALECTS)('the asset quota with kept revisions on %s', (dialect) => {
  const SIZE = 300 * 1024;
  const QUOTA = 1024 * 1024;
  let t: TestApp;
  /** An SVG of about SIZE bytes whose word tells revisions apart. */
  const big = (word: string) => logo(word, SIZE - logo(word).length);

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_ASSET_ACCOUNT_MAX_BYTES: String(QUOTA) });
  }, 180_000);
  afterAll(async () => t?.close());

  it('twenty new files of the pinned name at once all fit (unpinned ones go), then twenty new names: exactly one more fits', async () => {
    const account = await t.createAccount({ credits: 20, plan: 'enterprise', rate_limit: { per_minute: 1000 } });
    // Multipart, as the studio sends files (a JSON body this large waits for a parse thread, at most 4 per account).
    const upload = async (name: string, word: string) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(big(word))], { type: 'image/svg+xml' }), name);
      const res = await fetch(`${t.baseUrl}/v1/assets`, {
        method: 'POST',
        headers: { 'x-api-key': account.apiKey },
        body: form,
      });
      return { status: res.status, body: await res.json() };
    };
    expect((await upload('hero.svg', 'HERO-0')).status).toBe(201);
    const id = (
      await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Hero', html: `<img src="{{ asset('hero.svg') }}" width="300" height="40">` },
      })
    ).body.id as string;
    expect(
      (await t.request('POST', `/v1/templates/${id}/versions`, { apiKey: account.apiKey, body: { tag: 'h1' } })).status,
    ).toBe(200);

    // Revision 1 stays for h1; each new one replaces the last unpinned one: two files, 600 KiB.
    const again = await Promise.all(Array.from({ length: 20 }, (_, i) => upload('hero.svg', `HERO-${i + 1}`)));
    expect(
      again.map((a) => a.status),
      JSON.stringify(again.find((a) => a.status !== 201)?.body),
    ).toEqual(Array(20).fill(201));
    const revisions = (await t.request('GET', '/v1/assets/hero.svg', { apiKey: account.apiKey, headers: JSON_ACCEPT }))
      .body.revisions as { revision: number; size: number }[];
    expect(revisions.map((r) => r.revision)).toEqual([21, 1]);

    // 600 KiB kept + 300 KiB fits in 1 MiB; a second 300 KiB does not.
    const names = await Promise.all(Array.from({ length: 20 }, (_, i) => upload(`other-${i}.svg`, `OTHER-${i}`)));
    const statuses = names.map((a) => a.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(413)]);
    for (const refused of names.filter((a) => a.status === 413)) {
      expect(refused.body).toEqual({
        error: 'PAYLOAD_TOO_LARGE',
        message: expect.stringMatching(
          new RegExp(
            `would take \\d+ bytes, ${big('HERO-0').length} of them earlier revisions that published versions still print; the limit is 1048576 bytes`,
          ),
        ),
      });
    }
    const listed = (await t.request('GET', '/v1/assets', { apiKey: account.apiKey })).body.assets as { name: string }[];
    expect(listed).toHaveLength(2);
    // The version still prints its own revision.
    const pdf = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: id, version: 'h1', data: {}, export_type: 'binary' },
    });
    expect(pdfText(pdf.bytes)).toContain('HERO-0');
  });

  it('versions published while uploads run each keep the revision they pinned', async () => {
    const account = await t.createAccount({ credits: 40, plan: 'enterprise', rate_limit: { per_minute: 1000 } });
    const small = (word: string) =>
      t.request('POST', '/v1/assets', {
        apiKey: account.apiKey,
        body: { name: 'race.svg', content_base64: b64(logo(word)) },
      });
    expect((await small('RACE-0')).status).toBe(201);
    const id = (
      await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Race', html: `<img src="{{ asset('race.svg') }}" width="300" height="40">` },
      })
    ).body.id as string;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => [
        small(`RACE-${i + 1}`),
        t.request('POST', `/v1/templates/${id}/versions`, { apiKey: account.apiKey, body: { tag: `r${i}` } }),
      ]).flat(),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(10).fill(200), ...Array(10).fill(201)]);
    // Each version prints the revision the description says it pins, whichever upload it raced.
    const wordOf = new Map(
      Array.from({ length: 11 }, (_, i) => [
        createHash('sha256')
          .update(logo(`RACE-${i}`))
          .digest('hex'),
        `RACE-${i}`,
      ]),
    );
    const revisions = (await t.request('GET', '/v1/assets/race.svg', { apiKey: account.apiKey, headers: JSON_ACCEPT }))
      .body.revisions as { sha256: string; used_by: { tag: string }[] }[];
    const pinned = revisions.flatMap((r) => r.used_by.map((u) => [u.tag, wordOf.get(r.sha256)!] as const));
    expect(pinned.map(([tag]) => tag).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`).sort());
    for (const [tag, word] of pinned) {
      const pdf = await t.request('POST', '/v1/pdf/create', {
        apiKey: account.apiKey,
        body: { template_id: id, version: tag, data: {}, export_type: 'binary' },
      });
      expect(pdf.status).toBe(200);
      expect(pdf.headers.get('x-pressroom-warnings'), tag).toBeNull();
      expect(pdfText(pdf.bytes).match(/RACE-\d+/)?.[0], tag).toBe(word);
    }
  });
});
