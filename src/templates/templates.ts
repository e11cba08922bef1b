/**
 * Template management: create, read, update, delete, and the field definitions no-code tools read.
 * Ownership: an id that exists but belongs to another account answers FORBIDDEN; an unknown id
 * answers TEMPLATE_NOT_FOUND (the order the spec gives).
 */
import type { Db, Dialect } from '../db/database.js';
import type { TemplateRow } from '../db/schema.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { newTemplateId } from '../shared/ids.js';
import { normalizeFields, type FieldDefinition, type FieldInput } from './field-inference.js';
import { syntaxIssues } from '../template-language/syntax.js';
import { createTemplateThreads, type TemplateThreads } from './template-threads.js';
import * as store from './templates-store.js';
import { formColumns, templateContentOf, type Template } from './template-content.js';
import { createTemplateVersionService, type TemplateVersionService } from './template-versions.js';
import { deleteTemplateVersions } from './template-versions-store.js';
import { withTransaction } from '../db/database.js';
import { resolveKind, type Canvas, type TemplateKind } from './template-kind.js';
import { listTemplateLayers } from './layers/layer-listing.js';
import { assetUsesOf, DRAFT, forgetAssetUses, recordAssetUses } from './template-asset-uses.js';
import { MAX_TEMPLATE_LAYERS, type TemplateLayer } from './layers/template-layers.js';
import type { FormFiles } from '../pdf-forms/form-files.js';
import { editedFormFields, formFieldDefinitions } from '../pdf-forms/form-fields.js';

import type { PageSetup } from '../rendering/pdf-renderer.js';
import { pageSizeProblem } from '../rendering/page-size.js';

/** Page setup is the renderer's: a template stores exactly what the engine prints with. */
export type { PageSetup };
export type { Template };
export type { TemplateLayer } from './layers/template-layers.js';

export interface TemplateInput {
  name: string;
  /** Required for `pdf` and `image` templates; a `pdf_form` template has none (its PDF is its layout). */
  html?: string;
  css?: string | null;
  fields?: FieldInput[] | null;
  sample_data?: Record<string, unknown> | null;
  page?: PageSetup | null;
  /** `pdf` (default) or `image`. */
  kind?: TemplateKind;
  /** Image templates only; DEFAULT_CANVAS when an image template is created without one. */
  canvas?: Canvas | null;
  /** Strict mode (TemplateContent.strict). @defaultValue false */
  strict?: boolean;
  /** `pdf_form` templates only: the fillable PDF, base64 (pdf-forms/form-files.ts checks it). */
  pdf_base64?: string | null;
  /** `pdf_form` templates only: the fillable PDF's bytes, from a multipart upload's `pdf` file part (create only). */
  pdf?: Buffer | null;
}

export interface TemplateSummary {
  id: string;
  name: string;
  kind: TemplateKind;
  createdAt: number;
  updatedAt: number;
}

export interface TemplateService {
  create(accountId: string, input: TemplateInput): Promise<Template>;
  /** The caller's template; TEMPLATE_NOT_FOUND or FORBIDDEN otherwise. */
  get(accountId: string, templateId: string): Promise<Template>;
  /**
   * What a render uses: the draft when `version` is null or absent, else that version's immutable
   * snapshot (a tag or a number; VERSION_NOT_FOUND otherwise). The one place that decides.
   */
  resolve(accountId: string, templateId: string, version?: string | number | null): Promise<Template>;
  /** Newest first; `kind` lists only templates of that kind. */
  list(accountId: string, filter?: { kind?: TemplateKind }): Promise<TemplateSummary[]>;
  update(accountId: string, templateId: string, changes: Partial<TemplateInput>): Promise<Template>;
  /**
   * The layers image modifications can address (template-layers.ts), with warnings such as shared
   * names; listed off the service's thread (layer-listing.ts). DOCUMENT_TOO_LARGE past MAX_TEMPLATE_LAYERS.
   */
  layers(accountId: string, templateId: string): Promise<{ layers: TemplateLayer[]; warnings: string[] }>;
  /** Deletes the template and all its versions. */
  remove(accountId: string, templateId: string): Promise<void>;
  /**
   * The fields a template of this text would have (nothing saved): the studio's form follows the text as
   * it is typed. 422 naming the part and line when it does not parse, as a save would.
   */
  inferFields(
    accountId: string,
    input: { html: string; css?: string | null; page?: PageSetup | null; sample_data?: unknown },
  ): Promise<FieldDefinition[]>;
  /** The template's immutable, tagged versions (template-versions.ts). */
  versions: TemplateVersionService;
}

function toTemplate(row: TemplateRow): Template {
  return {
    id: row.id,
    accountId: row.account_id,
    ...templateContentOf(row),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Refuses (422) template parts that do not parse, naming the part and the line; a long part is compiled on a template thread. */
async function assertParses(
  threads: TemplateThreads,
  accountId: string,
  input: { html: string; css?: string | null; page?: PageSetup | null },
): Promise<void> {
  await threads.prepare({ accountId, kind: 'free' }, [
    input.html,
    input.css,
    input.page?.header_html,
    input.page?.footer_html,
  ]);
  const issues = syntaxIssues([
    { loc: ['body', 'html'], part: 'html', source: input.html },
    { loc: ['body', 'css'], part: 'css', source: input.css },
    { loc: ['body', 'page', 'header_html'], part: 'header', source: input.page?.header_html },
    { loc: ['body', 'page', 'footer_html'], part: 'footer', source: input.page?.footer_html },
  ]);
  if (issues.length > 0) throw new ValidationError(issues);
}

/** Refuses (422) a paper size the renderer cannot print: the renderer's own rule (rendering/page-size.ts). */
function assertPrintablePaper(page: PageSetup | null | undefined): void {
  const problem = pageSizeProblem(page);
  if (problem)
    throw new ValidationError([{ loc: ['body', 'page', problem.field], msg: problem.message, type: 'value_error' }]);
}

/** The most fields `inferFields` answers with: as many as a template may be given (`fields`, maxItems 500). */
export const MAX_FOLLOWED_FIELDS = 500;

function inferFor(
  threads: TemplateThreads,
  accountId: string,
  input: { html: string; css?: string | null; page?: PageSetup | null; sample_data?: unknown },
): Promise<FieldDefinition[]> {
  return threads.inferFields(
    { accountId, kind: 'free' },
    [input.html, input.css ?? '', input.page?.header_html ?? '', input.page?.footer_html ?? ''],
    input.sample_data ?? undefined,
  );
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** What the template service needs of the rest: the dialect (for the asset lock a publish takes) and the asset library's pruning. */
export interface TemplateServiceDeps {
  dialect: Dialect;
  /** Called after versions go, so the asset revisions only they printed go too. */
  assets?: { pruneUnpinned(accountId: string): Promise<void> };
  /** Where long templates are compiled and read (template-threads.ts); the service makes its own without. */
  threads?: TemplateThreads;
  /** Checks, stores and releases form templates' PDFs (pdf-forms/form-files.ts); without it `pdf_form` is refused. */
  forms?: FormFiles;
}

const refusal = (loc: (string | number)[], msg: string, type = 'value_error') =>
  new ValidationError([{ loc, msg, type }]);

/** The html a pdf or image template must have (the schema leaves it optional for pdf_form templates). */
function requiredHtml(html: string | undefined): string {
  if (html === undefined) throw refusal(['body', 'html'], 'Field required', 'missing');
  return html;
}

/** Refuses what a pdf_form template cannot have: text to render (its PDF is the layout). */
function refuseFormText(input: Partial<TemplateInput>): void {
  for (const part of ['html', 'css'] as const)
    if (input[part] != null)
      throw refusal(
        ['body', part],
        `A pdf_form template has no ${part}: its PDF is its layout, and data fills its fields. Leave ${part} out (a new PDF goes in pdf_base64)`,
      );
}

export function createTemplateService(db: Db, deps: TemplateServiceDeps): TemplateService {
  const threads = deps.threads ?? createTemplateThreads();
  const released = async (accountId: string, formKeys: (string | null)[] = []) => {
    await deps.assets?.pruneUnpinned(accountId);
    if (formKeys.some((key) => key !== null)) await deps.forms?.release(formKeys);
  };
  async function owned(accountId: string, templateId: string): Promise<TemplateRow> {
    const row = await store.findTemplate(db, templateId);
    if (!row) throw new AppError('TEMPLATE_NOT_FOUND', `Template ${templateId} was not found.`);
    if (row.account_id !== accountId)
      throw new AppError('FORBIDDEN', `Template ${templateId} belongs to another account.`);
    return row;
  }

  function formFiles(): FormFiles {
    if (!deps.forms) throw new AppError('SERVICE_UNAVAILABLE', 'Form templates are not set up in this process.');
    return deps.forms;
  }

  /** A pdf_form template: its PDF checked and stored (nothing is stored on a refusal), its fields read from the form. */
  async function createForm(accountId: string, input: TemplateInput): Promise<Template> {
    refuseFormText(input);
    resolveKind(input);
    if (input.pdf && input.pdf_base64 != null)
      throw refusal(['body', 'pdf_base64'], 'Give the PDF once: a multipart file part pdf, or pdf_base64');
    const pdf = input.pdf ?? input.pdf_base64;
    if (!pdf)
      throw refusal(['body', 'pdf_base64'], 'A pdf_form template needs its fillable PDF in pdf_base64', 'missing');
    const form = await formFiles().accept(accountId, pdf);
    const now = Date.now();
    try {
      const fields = input.fields ? editedFormFields(form.fields, input.fields) : formFieldDefinitions(form.fields);
      const row: TemplateRow = {
        id: newTemplateId(),
        account_id: accountId,
        name: input.name,
        html: '',
        css: null,
        fields: JSON.stringify(fields),
        fields_inferred: input.fields ? 0 : 1,
        sample_data: json(input.sample_data),
        page: null,
        kind: 'pdf_form',
        canvas: null,
        strict: 0,
        ...formColumns(form),
        created_at: now,
        updated_at: now,
        asset_uses_known: 1,
      };
      await withTransaction(db, async (trx) => {
        await store.insertTemplate(trx, row);
        await recordAssetUses(trx, row.id, DRAFT, []);
      });
      return toTemplate(row);
    } catch (error) {
      await formFiles().release([form.storageKey]);
      throw error;
    }
  }

  /**
   * A pdf_form template changed: its name, sample data, field labels and help texts, or its PDF (a new
   * draft: versions keep theirs). Fields edited before keep their labels for the keys a new form still has.
   */
  async function updateForm(accountId: string, current: Template, changes: Partial<TemplateInput>): Promise<Template> {
    refuseFormText(changes);
    resolveKind({ ...changes, kind: 'pdf_form' });
    const replaced = changes.pdf_base64 ? await formFiles().accept(accountId, changes.pdf_base64) : null;
    const form = replaced ?? current.form!;
    try {
      const fieldsGiven = changes.fields != null;
      const keepEdits = !fieldsGiven && !current.fieldsInferred && changes.fields !== null;
      const fields = fieldsGiven
        ? editedFormFields(form.fields, changes.fields!)
        : formFieldDefinitions(form.fields, keepEdits ? current.fields : undefined);
      await store.updateTemplate(db, current.id, {
        name: changes.name ?? current.name,
        sample_data: json(changes.sample_data === undefined ? current.sampleData : changes.sample_data),
        fields: JSON.stringify(fields),
        fields_inferred: fieldsGiven || keepEdits ? 0 : 1,
        ...formColumns(form),
        updated_at: Math.max(Date.now(), current.updatedAt + 1),
      });
    } catch (error) {
      if (replaced) await formFiles().release([replaced.storageKey]);
      throw error;
    }
    if (replaced) await formFiles().release([current.form!.storageKey]);
    return get(accountId, current.id);
  }

  const get = async (accountId: string, templateId: string): Promise<Template> =>
    toTemplate(await owned(accountId, templateId));

  const versions = createTemplateVersionService(db, get, { dialect: deps.dialect, released, threads });
  return {
    versions,
    resolve: (accountId, templateId, version) =>
      version == null ? get(accountId, templateId) : versions.resolve(accountId, templateId, version),

    async create(accountId, input) {
      if (input.kind === 'pdf_form') return createForm(accountId, input);
      if (input.pdf_base64 != null)
        throw refusal(
          ['body', 'pdf_base64'],
          'pdf_base64 is the PDF of a pdf_form template; set kind to "pdf_form", or leave it out',
        );
      input = { ...input, html: requiredHtml(input.html) };
      await assertParses(threads, accountId, input as TemplateInput & { html: string });
      assertPrintablePaper(input.page);
      const { kind, canvas } = resolveKind(input);
      const now = Date.now();
      const fields = input.fields
        ? normalizeFields(input.fields)
        : await inferFor(threads, accountId, input as TemplateInput & { html: string });
      const row: TemplateRow = {
        id: newTemplateId(),
        account_id: accountId,
        name: input.name,
        html: input.html!,
        css: input.css ?? null,
        fields: JSON.stringify(fields),
        fields_inferred: input.fields ? 0 : 1,
        sample_data: json(input.sample_data),
        page: json(input.page),
        kind,
        canvas: json(canvas),
        strict: input.strict ? 1 : 0,
        form_key: null,
        form: null,
        created_at: now,
        updated_at: now,
        asset_uses_known: 1,
      };
      const uses = assetUsesOf(input as TemplateInput & { html: string });
      await withTransaction(db, async (trx) => {
        await store.insertTemplate(trx, row);
        await recordAssetUses(trx, row.id, DRAFT, uses);
      });
      return toTemplate(row);
    },

    get,

    async layers(accountId, templateId) {
      const listing = await listTemplateLayers((await get(accountId, templateId)).html, accountId);
      if ('tooManyLayers' in listing) {
        throw new AppError(
          'DOCUMENT_TOO_LARGE',
          `The template has ${listing.tooManyLayers} layers (elements with data-layer or data-layer-name); at most ${MAX_TEMPLATE_LAYERS} are listed and modified. Give fewer elements a layer name.`,
          { details: { bound: 'layers', layers: listing.tooManyLayers, limitLayers: MAX_TEMPLATE_LAYERS } },
        );
      }
      return listing;
    },

    async list(accountId, filter = {}) {
      const rows = await store.listTemplates(db, accountId, filter.kind);
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        kind: r.kind,
        createdAt: Number(r.created_at),
        updatedAt: Number(r.updated_at),
      }));
    },

    async update(accountId, templateId, changes) {
      const current = toTemplate(await owned(accountId, templateId));
      if ((changes.kind === 'pdf_form') !== (current.kind === 'pdf_form') && changes.kind !== undefined)
        throw refusal(
          ['body', 'kind'],
          `A template cannot change ${current.kind === 'pdf_form' ? 'from' : 'to'} kind pdf_form; create a new template instead`,
        );
      if (current.kind === 'pdf_form') return updateForm(accountId, current, changes);
      if (changes.pdf_base64 != null)
        throw refusal(['body', 'pdf_base64'], 'pdf_base64 is the PDF of a pdf_form template; this template is not one');
      const next = {
        name: changes.name ?? current.name,
        html: changes.html ?? current.html,
        css: changes.css === undefined ? current.css : changes.css,
        page: changes.page === undefined ? current.page : changes.page,
        sample_data: changes.sample_data === undefined ? current.sampleData : changes.sample_data,
      };
      await assertParses(threads, accountId, next);
      assertPrintablePaper(next.page);
      const { kind, canvas } = resolveKind(changes, current);
      // Given fields replace the stored ones; otherwise inferred fields follow the new template text.
      const fieldsGiven = changes.fields !== undefined && changes.fields !== null;
      const keepUserFields = !fieldsGiven && !current.fieldsInferred && changes.fields !== null;
      const fields = fieldsGiven
        ? normalizeFields(changes.fields!)
        : keepUserFields
          ? current.fields
          : await inferFor(threads, accountId, next);
      const row: Partial<TemplateRow> = {
        name: next.name,
        html: next.html,
        css: next.css,
        page: json(next.page),
        sample_data: json(next.sample_data),
        fields: JSON.stringify(fields),
        fields_inferred: fieldsGiven || keepUserFields ? 0 : 1,
        kind,
        canvas: json(canvas),
        strict: (changes.strict ?? current.strict) ? 1 : 0,
        ...formColumns(null),
        updated_at: Math.max(Date.now(), current.updatedAt + 1),
        asset_uses_known: 1,
      };
      const uses = assetUsesOf(next);
      await withTransaction(db, async (trx) => {
        await store.updateTemplate(trx, templateId, row);
        await recordAssetUses(trx, templateId, DRAFT, uses);
      });
      return toTemplate({ ...(await owned(accountId, templateId)) });
    },

    async inferFields(accountId, input) {
      await assertParses(threads, accountId, input);
      const fields = await inferFor(threads, accountId, input);
      // The answer stays near the request's size: a form of more fields than a template may be given is no form to follow.
      if (fields.length > MAX_FOLLOWED_FIELDS) {
        throw new ValidationError([
          {
            loc: ['body', 'html'],
            msg: `The text uses ${fields.length} variables; at most ${MAX_FOLLOWED_FIELDS} are listed here (save the template to have them all inferred)`,
            type: 'too_many_fields',
          },
        ]);
      }
      return fields;
    },

    async remove(accountId, templateId) {
      const draftRow = await owned(accountId, templateId);
      const formKeys = [draftRow.form_key, ...(await store.versionFormKeys(db, templateId))];
      await withTransaction(db, async (trx) => {
        await forgetAssetUses(trx, templateId);
        await deleteTemplateVersions(trx, templateId);
        await store.deleteTemplate(trx, templateId);
      });
      await released(accountId, formKeys);
    },
  };
}
