/**
 * The Pressroom node: generate PDFs from a deployment's templates (now, or through a job), read jobs, run
 * the PDF tools, read the account; generate a batch from all input items and follow it.
 */
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { documentProperties } from './document-description';
import { generate, generateAsync } from './document-operations';
import { jobProperties } from './job-description';
import { getJob, getJobs } from './job-operations';
import { batchCreateProperties, batchProperties } from './batch-description';
import { cancelBatch, generateBatch, getBatch, getBatchItems } from './batch-operations';
import { getTemplateFields, getTemplateVersions, getTemplates } from './load-options';
import { downloadProperties, pdfToolProperties } from './pdf-tool-description';
import { runPdfTool } from './pdf-tool-operations';
import { CREDENTIAL, pressroomRequest } from './pressroom-api';

type Operation = (this: IExecuteFunctions, i: number) => Promise<INodeExecutionData[]>;

const OPERATIONS: Record<string, Record<string, Operation>> = {
	document: { generate, generateAsync },
	job: { get: getJob, getAll: getJobs },
	batch: { get: getBatch, getItems: getBatchItems, cancel: cancelBatch },
	pdfTool: {
		merge(i) {
			return runPdfTool.call(this, 'merge', i);
		},
		extractPages(i) {
			return runPdfTool.call(this, 'extractPages', i);
		},
		rotate(i) {
			return runPdfTool.call(this, 'rotate', i);
		},
	},
	account: {
		async get(i) {
			return [{ json: await pressroomRequest.call(this, { method: 'GET', path: '/v1/account', itemIndex: i }) }];
		},
	},
};

export class Pressroom implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Pressroom',
		name: 'pressroom',
		icon: 'file:pressroom.svg',
		group: ['output'],
		version: 1,
		subtitle: '={{$parameter["resource"] + ": " + $parameter["operation"]}}',
		description: 'Generate PDFs from Pressroom templates, follow jobs and run PDF tools',
		defaults: { name: 'Pressroom' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: CREDENTIAL, required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Account', value: 'account' },
					{ name: 'Batch', value: 'batch' },
					{ name: 'Document', value: 'document' },
					{ name: 'Job', value: 'job' },
					{ name: 'PDF Tool', value: 'pdfTool' },
				],
				default: 'document',
			},
			{
				displayName: 'Operation',
				name: 'operation',
				type: 'options',
				noDataExpression: true,
				displayOptions: { show: { resource: ['account'] } },
				options: [
					{
						name: 'Get',
						value: 'get',
						action: 'Get the account',
						description: "Credits and email of the key's account (GET /v1/account)",
					},
				],
				default: 'get',
			},
			...documentProperties,
			...batchCreateProperties,
			...batchProperties,
			...jobProperties,
			...pdfToolProperties,
			...downloadProperties,
		],
	};

	methods = {
		loadOptions: { getTemplates, getTemplateVersions },
		resourceMapping: { getTemplateFields },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		// Generate Batch makes one batch of all the input items: one request, one output item.
		if (
			items.length > 0 &&
			this.getNodeParameter('resource', 0) === 'document' &&
			this.getNodeParameter('operation', 0) === 'generateBatch'
		) {
			return [await generateBatch.call(this, items.length)];
		}
		const output: INodeExecutionData[] = [];
		for (let i = 0; i < items.length; i++) {
			try {
				const resource = this.getNodeParameter('resource', i) as string;
				const operation = this.getNodeParameter('operation', i) as string;
				const run = OPERATIONS[resource]?.[operation];
				if (!run)
					throw new NodeOperationError(this.getNode(), `Unknown operation "${operation}" of "${resource}"`, {
						itemIndex: i,
					});
				for (const item of await run.call(this, i)) output.push({ ...item, pairedItem: { item: i } });
			} catch (error) {
				if (!this.continueOnFail()) throw error;
				output.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
			}
		}
		return [output];
	}
}
