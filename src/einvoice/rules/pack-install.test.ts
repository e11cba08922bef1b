/**
 * The rules pack as an operator installs it (issue 41): `pressroom einvoice rules install --from DIR`
 * verifies every pinned file, builds and compiles the rules, and makes the pack active; a tampered or
 * missing file refuses the whole install and changes nothing; `rules status` hashes every file again,
 * and a pack changed after it was installed is refused by the service too.
 */
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HAS_SHARED_RULES,
  INSTALL_TIMEOUT_MS,
  installRulesPack,
  rulesCli,
  SHARED_RULES_DIR,
} from '../../../test/support/einvoice-rules.js';
import { closeXmlChecks } from '../xmllint/xml-schema-check.js';
import { SAMPLE_INVOICE } from '../../../test/support/documents/einvoice-samples.js';
import { buildEInvoice } from '../einvoice.js';
import { localPath, PACK_FILES, SOURCES } from './manifest.js';
import { gatherSources } from './pack-sources.js';
import { createEInvoiceRules } from './official-checks.js';
import { STYLESHEETS } from './pack-build.js';
import { readActivePack } from './pack-store.js';

const temporary: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
};

afterAll(async () => {
  await closeXmlChecks();
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!HAS_SHARED_RULES)('downloading the pinned files', () => {
  it('fetches each from raw.githubusercontent.com/<repository>/<full commit>/<path> and verifies it like a local copy; one unreachable file refuses them all', async () => {
    const asked: string[] = [];
    // The publishers' bytes, served from the local copy by URL (this machine has no network).
    const fromCopy = async (url: string) => {
      asked.push(url);
      const file = PACK_FILES.find(
        (f) =>
          url ===
          `https://raw.githubusercontent.com/${SOURCES[f.source].repository}/${SOURCES[f.source].commit}/${f.path}`,
      );
      if (!file) throw new Error(`not a pinned URL: ${url}`);
      return readFileSync(join(SHARED_RULES_DIR, localPath(file)));
    };
    const files = await gatherSources({ kind: 'download', fetch: fromCopy });
    expect(files.map((f) => f.path)).toEqual(PACK_FILES.map(localPath));
    expect(new Set(asked).size).toBe(PACK_FILES.length);
    for (const url of asked)
      expect(url).toMatch(/^https:\/\/raw\.githubusercontent\.com\/[\w.-]+\/[\w.-]+\/[0-9a-f]{40}\//);

    const unreachable = (url: string) =>
      url.endsWith('/rules/sch/PEPPOL-EN16931-CII.sch') ? Promise.reject(new Error('HTTP 404')) : fromCopy(url);
    await expect(gatherSources({ kind: 'download', fetch: unreachable })).rejects.toThrow(
      /peppol-bis-billing-3\.0\.19\/rules\/sch\/PEPPOL-EN16931-CII\.sch: could not be downloaded from https:\/\/raw\.githubusercontent\.com\/OpenPEPPOL\/peppol-bis-invoice-3\/78d7f7dfa223f39f8ebd8d35c127f2690e646322\/rules\/sch\/PEPPOL-EN16931-CII\.sch \(HTTP 404\)/,
    );
  });
});

describe('pressroom einvoice rules install', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDir('rules-pack-');
    await installRulesPack(dataDir);
  }, INSTALL_TIMEOUT_MS);

  it('makes the pack active: every pinned file kept with its hash, the four stylesheets compiled; status hashes them again', async () => {
    const pack = await readActivePack(dataDir);
    expect(pack).not.toBeNull();
    expect(pack!.description.rule_sets).toEqual({ en16931: 'EN16931 1.3.16', xrechnung: 'XRechnung 3.0.2' });
    expect(pack!.description.files.map((f) => f.path).sort()).toEqual(PACK_FILES.map(localPath).sort());
    for (const id of STYLESHEETS) expect(existsSync(pack!.stylesheets[id].path), id).toBe(true);

    const status = await rulesCli(dataDir, ['status']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      installed: true,
      verified: 'ok',
      rule_sets: { en16931: 'EN16931 1.3.16', xrechnung: 'XRechnung 3.0.2' },
    });
  });

  it.skipIf(!HAS_SHARED_RULES)(
    'refuses a tampered or missing file, naming each, and changes nothing: the installed pack stays active, a new data directory gets none',
    async () => {
      const copy = tempDir('rules-tampered-');
      cpSync(SHARED_RULES_DIR, copy, { recursive: true });
      appendFileSync(
        join(copy, 'peppol-bis-billing-3.0.19/rules/sch/PEPPOL-EN16931-UBL.sch'),
        '<!-- one more line -->\n',
      );
      rmSync(join(copy, 'ubl-2.1/xsd/common/UBL-CommonBasicComponents-2.1.xsd'));
      const before = readFileSync(join(dataDir, 'einvoice-rules', 'active.json'), 'utf8');

      const refused = await rulesCli(dataDir, ['install', '--from', copy]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('EINVOICE_RULES_REFUSED');
      expect(refused.stderr).toMatch(
        /peppol-bis-billing-3\.0\.19\/rules\/sch\/PEPPOL-EN16931-UBL\.sch: SHA-256 [0-9a-f]{64}, not the pinned/,
      );
      expect(refused.stderr).toContain('ubl-2.1/xsd/common/UBL-CommonBasicComponents-2.1.xsd: missing');
      expect(refused.stdout).toBe('');
      expect(readFileSync(join(dataDir, 'einvoice-rules', 'active.json'), 'utf8')).toBe(before);
      expect(readdirSync(join(dataDir, 'einvoice-rules')).filter((n) => n.startsWith('.staging'))).toEqual([]);

      const fresh = tempDir('rules-fresh-');
      expect((await rulesCli(fresh, ['install', '--from', copy])).code).toBe(1);
      expect(existsSync(join(fresh, 'einvoice-rules', 'active.json'))).toBe(false);
      expect(JSON.parse((await rulesCli(fresh, ['status'])).stdout)).toEqual({ installed: false });
    },
  );

  it('a stylesheet changed after the install: status names it (exit 1), and the service refuses the pack with EINVOICE_RULES_DAMAGED', async () => {
    const damaged = tempDir('rules-damaged-');
    await installRulesPack(damaged);
    const pack = (await readActivePack(damaged))!;
    writeFileSync(
      pack.stylesheets['en16931-cii'].path,
      readFileSync(pack.stylesheets['en16931-cii'].path, 'utf8').replace('BR-CO-10', 'BR-CO-99'),
    );

    const status = await rulesCli(damaged, ['status']);
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout).verified).toEqual([
      'compiled/en16931-cii.sef.json: changed since it was installed',
    ]);

    const rules = createEInvoiceRules({ dataDir: damaged, mode: 'auto' });
    try {
      const { xml } = await buildEInvoice({ format: 'factur-x', invoice: SAMPLE_INVOICE }, { accountId: 'a' });
      await expect(
        rules.judge(
          pack,
          xml,
          { syntax: 'cii', profile: 'en16931', xrechnung: false, schema: false },
          { accountId: 'a', kind: 'paid' },
        ),
      ).rejects.toMatchObject({ code: 'EINVOICE_RULES_DAMAGED' });
    } finally {
      await rules.close();
    }
  });

  it('a pack compiled by another SaxonJS is refused until it is reinstalled (status: damaged, exit 1)', async () => {
    const pack = (await readActivePack(dataDir))!;
    const described = join(pack.dir, 'pack.json');
    writeFileSync(
      described,
      readFileSync(described, 'utf8').replace(/"compiler": "xslt3 [^"]*"/, '"compiler": "xslt3 2.6.0 (SaxonJS)"'),
    );
    await expect(readActivePack(dataDir)).rejects.toThrow(
      /compiled by xslt3 2\.6\.0 \(SaxonJS\); this Pressroom runs xslt3 2\.7\.0/,
    );
    const status = await rulesCli(dataDir, ['status']);
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout)).toMatchObject({ installed: true, damaged: expect.stringContaining('reinstall') });
    await installRulesPack(dataDir);
    expect(JSON.parse((await rulesCli(dataDir, ['status'])).stdout).verified).toBe('ok');
  });
});
