/**
 * Starts a workflow when a Pressroom job ends: its webhook (pdf.completed or pdf.failed), accepted only
 * with a valid signature made with the credential's Webhook Secret. Pressroom has no webhook
 * subscription API: each job names its URL, so this node's URL goes into Generate (Async)'s Webhook URL.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError, jsonParse } from 'n8n-workflow';
import { CREDENTIAL, downloadPdf } from '../Pressroom/pressroom-api';
import { verifyPressroomWebhook } from './webhook-signature';

export class PressroomTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Pressroom Trigger',
		name: 'pressroomTrigger',
		icon: 'file:pressroom.svg',
		group: ['trigger'],
		version: 1,
		description: 'Starts the workflow when a Pressroom job completes or fails',
		defaults: { name: 'Pressroom Trigger' },
		inputs: [],
		outputs: ['main'],
		credentials: [{ name: CREDENTIAL, required: true }],
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'pressroom' }],
		properties: [
			{
				displayName:
					"Put this node's production URL in Generate (Async) → Webhook URL, and the same Webhook Secret in both nodes' credential: webhooks without a valid signature are refused (401).",
				name: 'notice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				options: [
					{ name: 'Job Completed (pdf.completed)', value: 'pdf.completed' },
					{ name: 'Job Failed (pdf.failed)', value: 'pdf.failed' },
				],
				default: ['pdf.completed', 'pdf.failed'],
				description: 'Other events are answered 200 and start nothing',
			},
			{
				displayName: 'Download PDF',
				name: 'download',
				type: 'boolean',
				default: false,
				description: 'Whether to download the PDF of a completed job into a binary property',
			},
			{
				displayName: 'Put Output File in Field',
				name: 'binaryPropertyName',
				type: 'string',
				default: 'data',
				displayOptions: { show: { download: [true] } },
			},
		],
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const request = this.getRequestObject() as IncomingMessage & { rawBody?: Buffer };
		const { webhookSecret } = await this.getCredentials(CREDENTIAL);
		if (!webhookSecret)
			throw new NodeOperationError(
				this.getNode(),
				"The credential has no Webhook Secret: set one, and create the jobs with it, so this trigger can check Pressroom's signature",
			);
		// n8n keeps the bytes it received in rawBody; the signature covers those bytes, not a re-serialisation.
		const rawBody = request.rawBody ?? Buffer.alloc(0);
		const verdict = verifyPressroomWebhook({
			rawBody,
			headers: request.headers,
			secret: String(webhookSecret),
			nowSeconds: Math.floor(Date.now() / 1000),
		});
		if (!verdict.ok) {
			const response = this.getResponseObject() as ServerResponse;
			response.writeHead(401, { 'content-type': 'application/json' });
			response.end(JSON.stringify({ error: 'UNAUTHORIZED', message: verdict.reason }));
			return { noWebhookResponse: true };
		}
		const payload = jsonParse<IDataObject>(rawBody.toString('utf8'));
		if (!(this.getNodeParameter('events', []) as string[]).includes(String(payload.event)))
			return { webhookResponse: { received: true } };
		const item: INodeExecutionData = { json: { ...payload, webhook_id: request.headers['webhook-id'] as string } };
		const result = (payload.result ?? {}) as IDataObject;
		if (
			this.getNodeParameter('download', false) &&
			payload.event === 'pdf.completed' &&
			typeof result.url === 'string'
		) {
			const binary = await downloadPdf.call(this, {
				url: result.url,
				filename: String(result.filename ?? 'document.pdf'),
				itemIndex: 0,
			});
			item.binary = { [this.getNodeParameter('binaryPropertyName', 'data') as string]: binary };
		}
		return { workflowData: [[item]] };
	}
}
