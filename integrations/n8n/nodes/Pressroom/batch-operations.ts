/** Document → Generate Batch (all input items as one batch) and the Batch resource: Get, Get Items, Cancel. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import { generationBody, idempotencyHeader } from './document-operations';
import { CREDENTIAL, downloadPdf, pressroomRequest } from './pressroom-api';

/** A batch's progress changes by whole documents: every 2 s is often enough. */
const POLL_INTERVAL_MS = 2000;
const ENDED = ['completed', 'completed_with_errors', 'failed', 'cancelled'];

/** Generate Batch: every input item is one row; one request, one output item (the batch's ID and total). */
export async function generateBatch(this: IExecuteFunctions, count: number): Promise<INodeExecutionData[]> {
	const first = generationBody.call(this, 0);
	const items = Array.from({ length: count }, (_, i) => {
		const filename = (this.getNodeParameter('itemFilename', i, '') as string).trim();
		return { data: generationBody.call(this, i).data, ...(filename ? { filename } : {}) };
	});
	const { data: _data, filename, ...shared } = first;
	const body: IDataObject = { ...shared, items, output: this.getNodeParameter('batchOutput', 0, 'zip') };
	if (filename) body.filename = filename;
	const webhookUrl = (this.getNodeParameter('webhookUrl', 0, '') as string).trim();
	if (webhookUrl) {
		body.webhook_url = webhookUrl;
		const { webhookSecret } = await this.getCredentials(CREDENTIAL);
		if (webhookSecret) body.webhook_secret = webhookSecret;
	}
	const answer = (await pressroomRequest.call(this, {
		method: 'POST',
		path: '/v1/pdf/batches',
		body,
		headers: idempotencyHeader.call(this, 0),
		itemIndex: 0,
	})) as IDataObject;
	return [{ json: answer, pairedItem: Array.from({ length: count }, (_, item) => ({ item })) }];
}

const batchPath = (ctx: IExecuteFunctions, i: number) =>
	`/v1/pdf/batches/${encodeURIComponent((ctx.getNodeParameter('batchId', i) as string).trim())}`;

/** Get: the batch; with "Wait for Completion", polled until it ends; with "Download", its zip or merged PDF as binary. */
export async function getBatch(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
	const path = batchPath(this, i);
	let batch = (await pressroomRequest.call(this, { method: 'GET', path, itemIndex: i })) as IDataObject;
	if (this.getNodeParameter('waitForCompletion', i, false)) {
		const deadline = Date.now() + (this.getNodeParameter('waitTimeoutSeconds', i, 600) as number) * 1000;
		while (!ENDED.includes(String(batch.status))) {
			if (Date.now() >= deadline)
				throw new NodeOperationError(
					this.getNode(),
					`The batch is still ${String(batch.status)} (${String(batch.completed)} of ${String(batch.total)} done) after the timeout`,
					{ itemIndex: i },
				);
			await sleep(POLL_INTERVAL_MS);
			if (this.getExecutionCancelSignal()?.aborted)
				throw new NodeOperationError(this.getNode(), 'Stopped waiting for the batch: the execution was cancelled', {
					itemIndex: i,
				});
			batch = (await pressroomRequest.call(this, { method: 'GET', path, itemIndex: i })) as IDataObject;
		}
	}
	const result = batch.result as IDataObject | null;
	if (!this.getNodeParameter('download', i, false) || !result || typeof result.url !== 'string')
		return [{ json: batch }];
	const property = this.getNodeParameter('binaryPropertyName', i, 'data') as string;
	const mimeType = String(result.filename).endsWith('.zip') ? 'application/zip' : 'application/pdf';
	const binary = await downloadPdf.call(this, {
		url: result.url,
		filename: String(result.filename),
		itemIndex: i,
		mimeType,
	});
	return [{ json: batch, binary: { [property]: binary } }];
}

/** Get Items: one output item per document of the batch, in row order. */
export async function getBatchItems(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
	const qs: IDataObject = { limit: this.getNodeParameter('limit', i, 100) };
	const status = this.getNodeParameter('itemStatus', i, '') as string;
	if (status) qs.status = status;
	const answer = (await pressroomRequest.call(this, {
		method: 'GET',
		path: `${batchPath(this, i)}/items`,
		qs,
		itemIndex: i,
	})) as { items: IDataObject[] };
	return answer.items.map((item) => ({ json: item }));
}

export async function cancelBatch(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
	return [
		{
			json: (await pressroomRequest.call(this, {
				method: 'POST',
				path: `${batchPath(this, i)}/cancel`,
				body: {},
				itemIndex: i,
			})) as IDataObject,
		},
	];
}
