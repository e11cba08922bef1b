/** Generate (POST /v1/pdf/create) and Generate (Async) (POST /v1/pdf/create-async) for one item. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData, ResourceMapperValue } from 'n8n-workflow';
import { NodeOperationError, jsonParse } from 'n8n-workflow';
import { CREDENTIAL, downloadPdf, pressroomRequest } from './pressroom-api';

/** The request body both doors share: template, data and the delivery options that are set. */
export function generationBody(this: IExecuteFunctions, i: number): IDataObject {
	const options = this.getNodeParameter('options', i, {}) as IDataObject;
	const body: IDataObject = {
		template_id: this.getNodeParameter('templateId', i) as string,
		data: templateData.call(this, i),
	};
	if (options.filename) body.filename = options.filename;
	if (options.expiration !== undefined) body.expiration = options.expiration;
	if (options.pdfVariant) body.pdf_variant = options.pdfVariant;
	if (options.version) body.version = options.version;
	return body;
}

/** The data object: the mapped template fields (dotted keys, which Pressroom nests), or the JSON given. */
function templateData(this: IExecuteFunctions, i: number): IDataObject {
	if (this.getNodeParameter('dataMode', i) === 'json') {
		const raw = this.getNodeParameter('jsonData', i, '{}') as unknown;
		const data =
			typeof raw === 'string' ? jsonParse<unknown>(raw, { errorMessage: 'JSON Data is not valid JSON' }) : raw;
		if (typeof data !== 'object' || data === null || Array.isArray(data)) {
			throw new NodeOperationError(this.getNode(), 'JSON Data must be an object, e.g. {"name": "Ada"}', {
				itemIndex: i,
			});
		}
		return data as IDataObject;
	}
	const mapped = this.getNodeParameter('templateFields', i) as ResourceMapperValue;
	const data: IDataObject = {};
	// A field left empty is not sent: the template's own default (or its required-field check) applies.
	for (const [key, value] of Object.entries(mapped?.value ?? {}))
		if (value !== null && value !== undefined) data[key] = value as IDataObject[string];
	return data;
}

export function idempotencyHeader(this: IExecuteFunctions, i: number): IDataObject | undefined {
	const key = (this.getNodeParameter('options', i, {}) as IDataObject).idempotencyKey;
	return key ? { 'Idempotency-Key': String(key) } : undefined;
}

/** Generate: the link answer as JSON and, when asked, the PDF in a binary property. */
export async function generate(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
	const answer = (await pressroomRequest.call(this, {
		method: 'POST',
		path: '/v1/pdf/create',
		body: generationBody.call(this, i),
		headers: idempotencyHeader.call(this, i),
		itemIndex: i,
	})) as IDataObject;
	if (!this.getNodeParameter('download', i, false)) return [{ json: answer }];
	const property = this.getNodeParameter('binaryPropertyName', i, 'data') as string;
	const binary = await downloadPdf.call(this, {
		url: String(answer.url),
		filename: String(answer.filename),
		itemIndex: i,
	});
	return [{ json: answer, binary: { [property]: binary } }];
}

/** Generate (Async): the job's ID; with a webhook URL, the credential's secret signs its webhooks. */
export async function generateAsync(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
	const body = generationBody.call(this, i);
	const webhookUrl = (this.getNodeParameter('webhookUrl', i, '') as string).trim();
	if (webhookUrl) {
		body.webhook_url = webhookUrl;
		const { webhookSecret } = await this.getCredentials(CREDENTIAL);
		if (webhookSecret) body.webhook_secret = webhookSecret;
	}
	const answer = (await pressroomRequest.call(this, {
		method: 'POST',
		path: '/v1/pdf/create-async',
		body,
		headers: idempotencyHeader.call(this, i),
		itemIndex: i,
	})) as IDataObject;
	return [{ json: answer }];
}
