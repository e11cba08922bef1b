/**
 * Calls to a Pressroom deployment: the base URL and key come from the `pressroomApi` credential, and a
 * refusal becomes an n8n error carrying Pressroom's own words (its code and message, or each 422 field).
 */
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
	INodeExecutionData,
	IWebhookFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

export const CREDENTIAL = 'pressroomApi';

/** How much of an answer that is not JSON goes into the error message. */
const MAX_TEXT_ANSWER_CHARS = 300;

type Context = IExecuteFunctions | ILoadOptionsFunctions;

/** The credential's base URL without trailing slashes; the API's routes start at /v1/. */
export async function baseUrlOf(context: Context): Promise<string> {
	const credentials = await context.getCredentials(CREDENTIAL);
	return String(credentials.baseUrl ?? '').replace(/\/+$/, '');
}

export interface ApiCall {
	method: IHttpRequestMethods;
	path: string;
	body?: IDataObject;
	qs?: IDataObject;
	headers?: IDataObject;
	itemIndex?: number;
}

/** One call to the API with the credential's key; answers the parsed JSON body, throws on any status ≥ 400. */
const WRONG_BASE_URL =
	"The credential's Base URL is not where Pressroom's API is served: give the address Pressroom is served at, without /v1.";

export async function pressroomRequest(this: Context, call: ApiCall): Promise<any> {
	const response = (await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL, {
		method: call.method,
		url: `${await baseUrlOf(this)}${call.path}`,
		body: call.body,
		qs: call.qs,
		headers: call.headers,
		json: true,
		returnFullResponse: true,
		// Pressroom's refusals carry the reason in the body; read it instead of a generic status text.
		ignoreHttpStatusErrors: true,
	})) as IN8nHttpFullResponse;
	if (response.statusCode >= 400) {
		// Not JSON (a proxy's error page, say): its start is enough to tell what answered.
		const body = (
			typeof response.body === 'object' && response.body !== null
				? response.body
				: { message: String(response.body).slice(0, MAX_TEXT_ANSWER_CHARS) }
		) as JsonObject;
		// Pressroom's "No route" under this base URL: the address is wrong, not the request.
		const noRoute =
			response.statusCode === 404 && body.error === 'NOT_FOUND' && String(body.message ?? '').startsWith('No route');
		throw new NodeApiError(this.getNode(), body, {
			message: noRoute ? `${String(body.message)} ${WRONG_BASE_URL}` : describeRefusal(response.statusCode, body),
			httpCode: String(response.statusCode),
			itemIndex: call.itemIndex,
		});
	}
	// Every call here answers JSON; anything else is another page under that address (the studio answers every GET).
	if (typeof response.body !== 'object' || response.body === null) {
		throw new NodeOperationError(
			this.getNode(),
			`The credential's Base URL answers ${call.path}, but not as Pressroom's API. ${WRONG_BASE_URL}`,
			{
				itemIndex: call.itemIndex,
			},
		);
	}
	return response.body;
}

/** `TEMPLATE_NOT_FOUND: Template … not found (HTTP 404)`, or for a 422 each field: `body.filename: …`. */
export function describeRefusal(status: number, body: JsonObject): string {
	const detail = body.detail;
	if (Array.isArray(detail)) {
		const fields = detail.map((entry) => {
			const item = (entry ?? {}) as JsonObject;
			const loc = Array.isArray(item.loc) ? item.loc.join('.') : 'request';
			return `${loc}: ${String(item.msg ?? 'invalid')}`;
		});
		return `Pressroom refused the request (HTTP ${status}): ${fields.join('; ')}`;
	}
	const code = typeof body.error === 'string' ? `${body.error}: ` : '';
	return `${code}${String(body.message ?? 'no message')} (HTTP ${status})`;
}

/**
 * Downloads a result link (`url` of a document, `result_url` of a job) into a binary property. The link
 * is signed (or presigned into the customer's bucket), so no key is sent: it must not reach a bucket's host.
 */
export async function downloadPdf(
	this: IExecuteFunctions | IWebhookFunctions,
	link: { url: string; filename?: string; itemIndex: number; mimeType?: string },
): Promise<NonNullable<INodeExecutionData['binary']>[string]> {
	// The document's size is bounded by the service that made it (PRESSROOM_MAX_DOCUMENT_BYTES).
	const response = (await this.helpers.httpRequest({
		method: 'GET',
		url: link.url,
		encoding: 'arraybuffer',
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	})) as IN8nHttpFullResponse;
	if (response.statusCode !== 200) {
		throw new NodeOperationError(
			this.getNode(),
			`Downloading the PDF failed with HTTP ${response.statusCode}; the link may have expired (expiration)`,
			{
				itemIndex: link.itemIndex,
			},
		);
	}
	const bytes = Buffer.from(response.body as ArrayBuffer);
	return this.helpers.prepareBinaryData(bytes, link.filename ?? 'document.pdf', link.mimeType ?? 'application/pdf');
}
