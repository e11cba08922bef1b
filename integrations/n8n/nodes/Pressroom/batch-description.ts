/** The Batch resource's parameters: read a batch (optionally waiting, downloading its zip or merged PDF), its items, cancel it. */
import type { INodeProperties } from 'n8n-workflow';

const show = (operation: string[], extra: Record<string, Array<string | boolean>> = {}) => ({
	displayOptions: { show: { resource: ['batch'], operation, ...extra } },
});

/** Document → Generate Batch's own parameters (the template and its data are Document's). */
export const batchCreateProperties: INodeProperties[] = [
	{
		displayName: 'Output',
		name: 'batchOutput',
		type: 'options',
		options: [
			{ name: 'Links', value: 'links', description: 'A signed link per document (Batch → Get Items)' },
			{ name: 'Zip', value: 'zip', description: 'One zip of all the PDFs' },
			{ name: 'Merged PDF', value: 'merged', description: 'One PDF, an outline entry per document (at most 2,000)' },
		],
		default: 'zip',
		displayOptions: { show: { resource: ['document'], operation: ['generateBatch'] } },
	},
	{
		displayName: 'Document File Name',
		name: 'itemFilename',
		type: 'string',
		default: '',
		placeholder: '={{ $json.invoice_number }}',
		description: "Each input item's file name (A-Z, 0-9, _ . -, without .pdf); empty: document-1, document-2, …",
		displayOptions: { show: { resource: ['document'], operation: ['generateBatch'] } },
	},
];

export const batchProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['batch'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				action: 'Get a batch',
				description: 'Its progress and, once done, its zip or merged PDF (GET /v1/pdf/batches/{ID})',
			},
			{
				name: 'Get Items',
				value: 'getItems',
				action: 'Get the items of a batch',
				description: 'One item per document with its link or error (GET /v1/pdf/batches/{ID}/items)',
			},
			{
				name: 'Cancel',
				value: 'cancel',
				action: 'Cancel a batch',
				description: 'Stop the documents not started yet, each refunded (POST /v1/pdf/batches/{ID}/cancel)',
			},
		],
		default: 'get',
	},
	{
		displayName: 'Batch ID',
		name: 'batchId',
		type: 'string',
		required: true,
		default: '',
		description: 'The batch_id that Document → Generate Batch answered',
		displayOptions: { show: { resource: ['batch'] } },
	},
	{
		displayName: 'Wait for Completion',
		name: 'waitForCompletion',
		type: 'boolean',
		default: false,
		description: 'Whether to poll the batch every 2 seconds until it ends, within the timeout',
		...show(['get']),
	},
	{
		displayName: 'Timeout (Seconds)',
		name: 'waitTimeoutSeconds',
		type: 'number',
		default: 600,
		typeOptions: { minValue: 1, maxValue: 3600 },
		...show(['get'], { waitForCompletion: [true] }),
	},
	{
		displayName: 'Status',
		name: 'itemStatus',
		type: 'options',
		default: '',
		options: [
			{ name: 'Any', value: '' },
			{ name: 'Cancelled', value: 'cancelled' },
			{ name: 'Completed', value: 'completed' },
			{ name: 'Failed', value: 'failed' },
			{ name: 'Pending', value: 'pending' },
			{ name: 'Processing', value: 'processing' },
		],
		...show(['getItems']),
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		default: 100,
		typeOptions: { minValue: 1, maxValue: 1000 },
		description: 'Max number of results to return',
		...show(['getItems']),
	},
];
