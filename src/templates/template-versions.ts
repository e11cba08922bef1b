/**
 * Template versions: immutable, tagged snapshots of a template (html, css, page setup with header and
 * footer, fields, sample data, kind, image canvas and strict mode). `POST /v1/pdf/create` and
 * `create-async` render one when given `version`; without it they render the draft (the template as
 * it is now). Editing the draft never changes a version; deleting the template deletes its versions.
 *
 * A `version` reference is a tag, or else a version number (`3` or `"3"`): a tag that looks like a
 * number wins over the number.
 */
import type { Db, Dialect } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import { assetSeqForPublish } from '../assets/asset-revisions.js';
import type { TemplateVersionRow } from '../db/schema.js';
import { AppError } from '../shared/errors.js';
import type { Template } from './template-content.js';
import * as store from './template-versions-store.js';
import { formColumns, templateContentOf, type TemplateContent } from './template-content.js';
import type { TemplateThreads } from './template-threads.js';
import { assetUsesOf, forgetAssetUses, recordAssetUses, versionAssetPin } from './template-asset-uses.js';

/** A version as listed (without its snapshot). */
export interface TemplateVersion {
  versionNumber: number;
  tag: string;
  description: string | null;
  createdAt: number;
}

/** A version with its snapshot (what the studio compares and previews). */
export interface TemplateVersionWithContent extends TemplateVersion {
  content: TemplateContent;
}

/** Template versions as the API sees them; every call checks the template's owner first. */
export interface TemplateVersionService {
  /** Ascending by number; the draft is not listed. */
  list(accountId: string, templateId: string): Promise<TemplateVersion[]>;
  /** Snapshots the current template under `tag`; VERSION_TAG_EXISTS when another version has it. */
  create(
    accountId: string,
    templateId: string,
    input: { tag: string; description?: string | null },
  ): Promise<TemplateVersion>;
  /** Changes a version's tag and/or description (null clears it); its content never changes. */
  update(
    accountId: string,
    templateId: string,
    versionNumber: number,
    changes: { tag?: string; description?: string | null },
  ): Promise<TemplateVersion>;
  remove(accountId: string, templateId: string, versionNumber: number): Promise<void>;
  /** One version by number with its snapshot; VERSION_NOT_FOUND otherwise. */
  get(accountId: string, templateId: string, versionNumber: number): Promise<TemplateVersionWithContent>;
  /** The snapshot named by a tag or number, as a renderable Template; VERSION_NOT_FOUND otherwise. */
  resolve(accountId: string, templateId: string, ref: string | number): Promise<Template>;
}

function toVersion(
  row: Pick<TemplateVersionRow, 'version_number' | 'tag' | 'description' | 'created_at'>,
): TemplateVersion {
  return {
    versionNumber: Number(row.version_number),
    tag: row.tag,
    description: row.description,
    createdAt: Number(row.created_at),
  };
}

async function toSnapshot(db: Db, accountId: string, row: TemplateVersionRow): Promise<Template> {
  return {
    id: row.template_id,
    accountId,
    ...templateContentOf(row),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.created_at),
    version: { number: Number(row.version_number), tag: row.tag, assets: await versionAssetPin(db, row) },
  };
}

const notFound = (templateId: string, ref: string | number) =>
  new AppError(
    'VERSION_NOT_FOUND',
    `Template ${templateId} has no version ${JSON.stringify(ref)}; GET /v1/templates/${templateId}/versions lists them.`,
  );

const tagTaken = (templateId: string, tag: string) =>
  new AppError(
    'VERSION_TAG_EXISTS',
    `Another version of template ${templateId} already has the tag "${tag}"; give that version another tag first (PATCH), or pick another tag.`,
  );

/** What publishing needs besides the database: the dialect (the asset lock), and who to tell when versions go. */
export interface VersionServiceDeps {
  dialect: Dialect;
  /** After a version is deleted: the asset revisions only it printed may go, and its form PDF when no other uses it. */
  released(accountId: string, formKeys?: (string | null)[]): Promise<void>;
  /** Compiles the long parts of a template off the event loop (template-threads.ts), before their asset names are read. */
  threads: Pick<TemplateThreads, 'prepare'>;
}

/** Creates the version service; `draft` is the owner-checked template read (templates.get). */
export function createTemplateVersionService(
  db: Db,
  draft: (accountId: string, templateId: string) => Promise<Template>,
  deps: VersionServiceDeps,
): TemplateVersionService {
  async function owned(accountId: string, templateId: string, versionNumber: number): Promise<TemplateVersionRow> {
    await draft(accountId, templateId);
    const row = await store.findVersionByNumber(db, templateId, versionNumber);
    if (!row) throw notFound(templateId, versionNumber);
    return row;
  }

  async function mapTagRace<T>(templateId: string, tag: string | undefined, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (tag !== undefined && store.isUniqueViolation(error)) throw tagTaken(templateId, tag);
      throw error;
    }
  }

  return {
    async list(accountId, templateId) {
      await draft(accountId, templateId);
      return (await store.listVersions(db, templateId)).map(toVersion);
    },

    async create(accountId, templateId, input) {
      const t = await draft(accountId, templateId);
      await deps.threads.prepare({ accountId, kind: 'free' }, [
        t.html,
        t.css,
        t.page?.header_html,
        t.page?.footer_html,
      ]);
      // The names the snapshot's own text uses: it pins their revisions (all, when it computes names).
      const uses = assetUsesOf(t);
      return mapTagRace(templateId, input.tag, () =>
        withTransaction(db, async (trx) => {
          if (await store.findVersionByTag(trx, templateId, input.tag)) throw tagTaken(templateId, input.tag);
          // Under the account's asset lock: an upload or prune in flight ends before, or sees this version.
          const assetSeq = await assetSeqForPublish(trx, deps.dialect, accountId);
          const row: TemplateVersionRow = {
            template_id: templateId,
            version_number: await store.nextVersionNumber(trx, templateId),
            tag: input.tag,
            description: input.description ?? null,
            name: t.name,
            html: t.html,
            css: t.css,
            fields: JSON.stringify(t.fields),
            fields_inferred: t.fieldsInferred ? 1 : 0,
            sample_data: t.sampleData === null ? null : JSON.stringify(t.sampleData),
            page: t.page === null ? null : JSON.stringify(t.page),
            kind: t.kind,
            canvas: t.canvas === null ? null : JSON.stringify(t.canvas),
            strict: t.strict ? 1 : 0,
            // The draft's form PDF key: never rewritten, so the version fills this very PDF.
            ...formColumns(t.form),
            created_at: Date.now(),
            asset_seq: assetSeq,
            asset_uses_known: 1,
          };
          await store.insertVersion(trx, row);
          await recordAssetUses(trx, templateId, row.version_number, uses);
          return toVersion(row);
        }),
      );
    },

    async update(accountId, templateId, versionNumber, changes) {
      const current = await owned(accountId, templateId, versionNumber);
      const set: { tag?: string; description?: string | null } = {};
      if (changes.tag !== undefined && changes.tag !== current.tag) set.tag = changes.tag;
      if (changes.description !== undefined) set.description = changes.description;
      if (Object.keys(set).length === 0) return toVersion(current);
      await mapTagRace(templateId, set.tag, async () => {
        if (set.tag !== undefined && (await store.findVersionByTag(db, templateId, set.tag)))
          throw tagTaken(templateId, set.tag);
        await store.updateVersionLabel(db, templateId, versionNumber, set);
      });
      return toVersion({ ...current, ...set });
    },

    async remove(accountId, templateId, versionNumber) {
      const current = await owned(accountId, templateId, versionNumber);
      const deleted = await withTransaction(db, async (trx) => {
        await forgetAssetUses(trx, templateId, versionNumber);
        return store.deleteVersion(trx, templateId, versionNumber);
      });
      if (!deleted) throw notFound(templateId, versionNumber);
      await deps.released(accountId, [current.form_key]);
    },

    async get(accountId, templateId, versionNumber) {
      const row = await owned(accountId, templateId, versionNumber);
      return { ...toVersion(row), content: templateContentOf(row) };
    },

    async resolve(accountId, templateId, ref) {
      await draft(accountId, templateId);
      const byTag = typeof ref === 'string' ? await store.findVersionByTag(db, templateId, ref) : undefined;
      const asNumber = typeof ref === 'number' ? ref : /^[1-9][0-9]{0,9}$/.test(ref) ? Number(ref) : undefined;
      const row =
        byTag ?? (asNumber !== undefined ? await store.findVersionByNumber(db, templateId, asNumber) : undefined);
      if (!row) throw notFound(templateId, ref);
      return toSnapshot(db, accountId, row);
    },
  };
}
