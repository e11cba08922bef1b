/** The Document resource's parameters: generate a PDF now (a link, optionally the bytes) or through a job. */
import type { INodeProperties } from 'n8n-workflow';

const generateOps = ['generate', 'generateAsync', 'generateBatch'];
const showFor = (operation: string[], extra: Record<string, Array<string | boolean>> = {}) => ({
	displayOptions: { show: { resource: ['document'], operation, ...extra } },
});

export const documentProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['document'] } },
		options: [
			{
				name: 'Generate',
				value: 'generate',
				action: 'Generate a PDF',
				description: 'Render a template with data and answer a signed download link (POST /v1/pdf/create)',
			},
			{
				name: 'Generate (Async)',
				value: 'generateAsync',
				action: 'Queue a PDF generation job',
				description: 'Queue the same generation as a job and answer its ID at once (POST /v1/pdf/create-async)',
			},
			{
				name: 'Generate Batch',
				value: 'generateBatch',
				action: 'Generate a batch of PDFs',
				description:
					'All input items as one batch, a document each: links, a zip or one merged PDF; follow it with Batch → Get (POST /v1/pdf/batches)',
			},
		],
		default: 'generate',
	},
	{
		displayName: 'Template Name or ID',
		name: 'templateId',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getTemplates' },
		required: true,
		default: '',
		description:
			'Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>',
		...showFor(generateOps),
	},
	{
		displayName: 'Data',
		name: 'dataMode',
		type: 'options',
		options: [
			{
				name: 'Template Fields',
				value: 'fields',
				description: 'One input per field of the template (GET /v1/templates/{ID}/fields)',
			},
			{ name: 'JSON', value: 'json', description: 'The whole data object as JSON: for lists of items and nested data' },
		],
		default: 'fields',
		...showFor(generateOps),
	},
	{
		displayName: 'Template Fields',
		name: 'templateFields',
		type: 'resourceMapper',
		noDataExpression: true,
		default: { mappingMode: 'defineBelow', value: null },
		required: true,
		typeOptions: {
			loadOptionsDependsOn: ['templateId'],
			resourceMapper: {
				resourceMapperMethod: 'getTemplateFields',
				mode: 'add',
				fieldWords: { singular: 'field', plural: 'fields' },
				addAllFields: true,
				multiKeyMatch: false,
				noFieldsError: 'This template has no fields: its HTML prints no variables',
			},
		},
		...showFor(generateOps, { dataMode: ['fields'] }),
	},
	{
		displayName: 'JSON Data',
		name: 'jsonData',
		type: 'json',
		default: '{}',
		description: 'The template\'s data, e.g. {"customer": {"name": "Ada"}, "items": [{"name": "Tea", "qty": 2}]}',
		...showFor(generateOps, { dataMode: ['json'] }),
	},
	{
		displayName: 'Webhook URL',
		name: 'webhookUrl',
		type: 'string',
		default: '',
		placeholder: 'https://n8n.example.com/webhook/pressroom',
		description:
			"Where Pressroom POSTs pdf.completed or pdf.failed when the job ends, e.g. a Pressroom Trigger's production URL. Signed with the credential's Webhook Secret when it has one.",
		...showFor(['generateAsync', 'generateBatch']),
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		...showFor(generateOps),
		options: [
			{
				displayName: 'Expiration (Seconds)',
				name: 'expiration',
				type: 'number',
				default: 86400,
				typeOptions: { minValue: 60, maxValue: 604800 },
				description: 'How long the download link stays valid (60–604800 s)',
			},
			{
				displayName: 'Filename',
				name: 'filename',
				type: 'string',
				default: '',
				description: 'Without .pdf: up to 100 letters, digits, _ - and .',
			},
			{
				displayName: 'Idempotency Key',
				name: 'idempotencyKey',
				type: 'string',
				default: '',
				description:
					'The same key and data within 24 h answer the first result and are charged once, e.g. an order number, so a retried execution does not pay twice',
			},
			{
				displayName: 'PDF Variant',
				name: 'pdfVariant',
				type: 'options',
				default: '',
				options: [
					{ name: 'Standard PDF', value: '' },
					{ name: 'PDF/A-1b', value: 'pdf/a-1b' },
					{ name: 'PDF/A-2b', value: 'pdf/a-2b' },
					{ name: 'PDF/A-3b', value: 'pdf/a-3b' },
				],
			},
			{
				displayName: 'Template Version Name or ID',
				name: 'version',
				type: 'options',
				default: '',
				typeOptions: { loadOptionsMethod: 'getTemplateVersions', loadOptionsDependsOn: ['templateId'] },
				description:
					'A published version by its tag, or the draft. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			},
		],
	},
];
