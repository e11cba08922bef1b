/** The Job resource's parameters: one job (optionally waited for), or the list. */
import type { INodeProperties } from 'n8n-workflow';

export const jobProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['job'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				action: 'Get a job',
				description: 'A job with its state and, once completed, its result link (GET /v1/pdf/jobs/{ID})',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many jobs',
				description: "The account's jobs, newest first (GET /v1/pdf/jobs)",
			},
		],
		default: 'get',
	},
	{
		displayName: 'Job ID',
		name: 'jobId',
		type: 'string',
		required: true,
		default: '',
		description: 'The job_id that Generate (Async) answered',
		displayOptions: { show: { resource: ['job'], operation: ['get'] } },
	},
	{
		displayName: 'Wait for Completion',
		name: 'waitForCompletion',
		type: 'boolean',
		default: false,
		description: 'Whether to poll the job every second until it is completed or failed, within the timeout',
		displayOptions: { show: { resource: ['job'], operation: ['get'] } },
	},
	{
		displayName: 'Timeout (Seconds)',
		name: 'waitTimeoutSeconds',
		type: 'number',
		default: 120,
		typeOptions: { minValue: 1, maxValue: 600 },
		description: 'How long to wait before failing with the job still pending or processing',
		displayOptions: { show: { resource: ['job'], operation: ['get'], waitForCompletion: [true] } },
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		default: 20,
		typeOptions: { minValue: 1, maxValue: 100 },
		description: 'Max number of results to return',
		displayOptions: { show: { resource: ['job'], operation: ['getAll'] } },
	},
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: { show: { resource: ['job'], operation: ['getAll'] } },
		options: [
			{
				displayName: 'Offset',
				name: 'offset',
				type: 'number',
				default: 0,
				typeOptions: { minValue: 0 },
				description: 'Number of jobs to skip',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				default: 'completed',
				options: [
					{ name: 'Completed', value: 'completed' },
					{ name: 'Failed', value: 'failed' },
					{ name: 'Pending', value: 'pending' },
					{ name: 'Processing', value: 'processing' },
				],
			},
		],
	},
];
