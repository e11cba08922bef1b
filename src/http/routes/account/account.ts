/** The account and its transaction history (read-only, no credits). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AccountService } from '../../../accounts/accounts.js';
import type { CreditLedger } from '../../../credits/ledger.js';
import { Nullable, PageQuery, StringEnum, errorResponses, isoTime } from '../../schemas.js';
import { templateFoxShape } from '../../templatefox-clients.js';

const TRANSACTION_TYPES = ['PDFGEN', 'REFUND', 'PURCHASE', 'BONUS'] as const;

const Transaction = Type.Object({
  transaction_ref: Type.String({ format: 'uuid', description: 'Unique reference' }),
  transaction_type: StringEnum(TRANSACTION_TYPES, {
    description: 'PDFGEN: a generation (1 credit); REFUND: a failed one given back; PURCHASE, BONUS: credits added',
  }),
  template_id: Nullable(Type.String({ description: 'Template of a PDFGEN; null otherwise' })),
  tool: Type.Optional(
    Nullable(
      Type.String({
        description:
          "What a PDFGEN without a template paid for: the PDF tool, `merge`, `extract-pages` or `rotate` (POST /v1/pdf-tools/…); null otherwise (Pressroom; not in TemplateFox's answer, and left out for its Go SDK: docs/templatefox.md)",
        examples: ['merge'],
      }),
    ),
  ),
  refunds: Type.Optional(
    Nullable(
      Type.Object(
        {
          transaction_ref: Type.String({ format: 'uuid', description: 'The PDFGEN this REFUND gives back' }),
          template_id: Nullable(Type.String({ description: "That PDFGEN's template" })),
          tool: Nullable(Type.String({ description: "That PDFGEN's PDF tool" })),
        },
        {
          description: "What a REFUND gives back; null for other types (Pressroom; left out for TemplateFox's Go SDK)",
        },
      ),
    ),
  ),
  job_id: Type.Optional(
    Nullable(
      Type.String({
        description:
          "The background job (create-async, or a batch item) whose generation a PDFGEN paid for or a REFUND gave back; null for a synchronous generation, a PDF tool, a grant, kept when the job record is gone (Pressroom; left out for TemplateFox's Go SDK)",
      }),
    ),
  ),
  batch_id: Type.Optional(
    Nullable(
      Type.String({
        description: "The batch that job is an item of; null otherwise (Pressroom; left out for TemplateFox's Go SDK)",
      }),
    ),
  ),
  exec_tm: Nullable(Type.Integer({ description: 'Execution time in milliseconds' })),
  credits: Type.Integer({ description: 'Positive = consumed; negative = added' }),
  created_at: Type.String({ format: 'date-time', description: 'When it happened (ISO 8601)' }),
});

export function accountRoutes(app: FastifyInstance, deps: { accounts: AccountService; ledger: CreditLedger }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/v1/account', {
    config: { auth: 'read' },
    schema: {
      operationId: 'getAccount',
      tags: ['Account'],
      summary: 'Get account info',
      description: "Remaining credits and the account's e-mail address. No credits. Accepts an access token too.",
      response: {
        200: Type.Object({
          credits: Type.Integer({ description: 'Remaining credits' }),
          email: Nullable(Type.String({ description: "The account's e-mail address" })),
          account_id: Type.Optional(
            Type.String({
              description:
                "Account ID (Pressroom; not in TemplateFox's answer, and left out for its Go SDK: docs/templatefox.md)",
            }),
          ),
          plan: Type.Optional(
            StringEnum(['free', 'pro', 'enterprise'] as const, {
              description:
                "Rate-limit plan (Pressroom; not in TemplateFox's answer, and left out for its Go SDK: docs/templatefox.md)",
            }),
          ),
        }),
        ...errorResponses(401, 422, 429),
      },
    },
    handler: async (request) => {
      const account = await deps.accounts.get(request.caller.accountId);
      return templateFoxShape(
        request,
        { credits: account.credits, email: account.email, account_id: account.id, plan: account.plan },
        ['account_id', 'plan'],
      );
    },
  });

  r.get('/v1/account/transactions', {
    config: { auth: 'read' },
    schema: {
      operationId: 'listTransactions',
      tags: ['Account'],
      summary: 'List transactions',
      description:
        'Credit transactions, newest first. No credits. Accepts an access token too. Pressroom adds what each refers to (`refunds`, `job_id`, `batch_id`) and two filters, `type` and `batch_id`; with a filter, `total` counts the transactions it keeps.',
      querystring: Type.Object({
        ...PageQuery({ default: 300, max: 1000 }),
        type: Type.Optional(
          StringEnum(TRANSACTION_TYPES, { description: 'Only transactions of this type (Pressroom)' }),
        ),
        batch_id: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 64,
            description:
              "Only the PDFGENs and REFUNDs of this batch's items (Pressroom); another account's batch matches nothing",
          }),
        ),
      }),
      response: {
        200: Type.Object({
          transactions: Type.Array(Transaction, { description: 'This page of transactions' }),
          total: Type.Integer({ description: 'All transactions of the account' }),
          limit: Type.Integer({ description: 'Page size applied' }),
          offset: Type.Integer({ description: 'Records skipped' }),
        }),
        ...errorResponses(401, 422, 429),
      },
    },
    handler: async (request) => {
      const limit = request.query.limit ?? 300;
      const offset = request.query.offset ?? 0;
      const { transactions, total } = await deps.ledger.list(
        request.caller.accountId,
        { limit, offset },
        { type: request.query.type, batchId: request.query.batch_id },
      );
      return {
        transactions: transactions.map((t) =>
          templateFoxShape(
            request,
            {
              transaction_ref: t.transaction_ref,
              transaction_type: t.transaction_type,
              template_id: t.template_id,
              tool: t.tool,
              refunds:
                t.refund_of === null
                  ? null
                  : { transaction_ref: t.refund_of, template_id: t.refunded_template_id, tool: t.refunded_tool },
              job_id: t.job_id,
              batch_id: t.batch_id,
              exec_tm: t.exec_tm,
              credits: t.credits,
              created_at: isoTime(Number(t.created_at)),
            },
            ['tool', 'refunds', 'job_id', 'batch_id'],
          ),
        ),
        total,
        limit,
        offset,
      };
    },
  });
}
