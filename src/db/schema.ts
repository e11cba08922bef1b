/**
 * Table types for Kysely. Times are epoch milliseconds (integers) in both dialects, so comparisons and
 * ordering behave the same on SQLite and PostgreSQL; the HTTP layer turns them into ISO 8601.
 */
import type { Generated, Insertable, Selectable } from 'kysely';

export interface AccountsTable {
  id: string;
  email: string | null;
  plan: 'free' | 'pro' | 'enterprise';
  credits: number;
  /** Per-account overrides of the plan's limits; null = the plan's value. */
  rate_limit_per_minute: number | null;
  rate_limit_per_day: number | null;
  created_at: number;
}

export interface ApiKeysTable {
  /** First 12 characters of the key: its public lookup part. */
  prefix: string;
  account_id: string;
  /** SHA-256 hex of the whole key. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface CreditTransactionsTable {
  /** Insertion order; the newest-first listing sorts on it. */
  seq: Generated<number>;
  transaction_ref: string;
  account_id: string;
  transaction_type: 'PDFGEN' | 'REFUND' | 'PURCHASE' | 'BONUS';
  template_id: string | null;
  exec_tm: number | null;
  /** Positive = consumed, negative = added. */
  credits: number;
  /** The PDFGEN a REFUND reverses (unique: a generation is refunded at most once). */
  refund_of: string | null;
  created_at: number;
}

export interface TemplatesTable {
  id: string;
  account_id: string;
  name: string;
  html: string;
  css: string | null;
  /** JSON array of field definitions. */
  fields: string;
  /** 1 when `fields` was inferred from the template (re-inferred on update), 0 when given by the user. */
  fields_inferred: number;
  /** JSON object or null. */
  sample_data: string | null;
  /** JSON object or null. */
  page: string | null;
  created_at: number;
  updated_at: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  credit_transactions: CreditTransactionsTable;
  templates: TemplatesTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type TemplateRow = Selectable<TemplatesTable>;
export type TransactionRow = Selectable<CreditTransactionsTable>;
export type NewTransaction = Insertable<CreditTransactionsTable>;
