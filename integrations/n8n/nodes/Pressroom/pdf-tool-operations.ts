/** PDF Tool → Merge, Extract Pages, Rotate (POST /v1/pdf-tools/…): inputs by URL or from the item's binary properties. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, jsonParse } from 'n8n-workflow';
import { downloadPdf, pressroomRequest } from './pressroom-api';

interface Source {
	inputType: 'binary' | 'url';
	binaryPropertyName?: string;
	url?: string;
}

/** One input as the API takes it: `{pdf_url}`, or `{pdf_base64}` read from a binary property of item `i`. */
async function pdfInput(this: IExecuteFunctions, source: Source, i: number): Promise<IDataObject> {
	if (source.inputType === 'url') {
		const url = (source.url ?? '').trim();
		if (!url) throw new NodeOperationError(this.getNode(), 'A PDF input has no URL', { itemIndex: i });
		return { pdf_url: url };
	}
	const property = source.binaryPropertyName || 'data';
	this.helpers.assertBinaryData(i, property);
	// Pressroom bounds the bytes of one request (PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES) and answers 413/422 past it.
	const bytes = await this.helpers.getBinaryDataBuffer(i, property);
	return { pdf_base64: bytes.toString('base64') };
}

function deliveryFields(this: IExecuteFunctions, i: number): IDataObject {
	const options = this.getNodeParameter('toolOptions', i, {}) as IDataObject;
	const body: IDataObject = {};
	if (options.filename) body.filename = options.filename;
	if (options.expiration !== undefined) body.expiration = options.expiration;
	return body;
}

async function toolBody(this: IExecuteFunctions, operation: string, i: number): Promise<IDataObject> {
	if (operation === 'merge') {
		const sources = ((this.getNodeParameter('sources', i, {}) as IDataObject).source ?? []) as Source[];
		if (sources.length < 2)
			throw new NodeOperationError(this.getNode(), `Merge needs at least 2 PDFs; ${sources.length} given`, {
				itemIndex: i,
			});
		const pdfs: IDataObject[] = [];
		for (const source of sources) pdfs.push(await pdfInput.call(this, source, i));
		return { pdfs };
	}
	const input = await pdfInput.call(
		this,
		{
			inputType: this.getNodeParameter('inputType', i) as Source['inputType'],
			binaryPropertyName: this.getNodeParameter('inputBinaryPropertyName', i, 'data') as string,
			url: this.getNodeParameter('pdfUrl', i, '') as string,
		},
		i,
	);
	if (operation === 'extractPages') return { ...input, pages: this.getNodeParameter('pages', i) as string };
	if (this.getNodeParameter('rotateMode', i, 'all') === 'all')
		return { ...input, rotation: this.getNodeParameter('rotation', i) as number };
	const raw = this.getNodeParameter('pageRotations', i) as unknown;
	const pageRotations =
		typeof raw === 'string' ? jsonParse<IDataObject>(raw, { errorMessage: 'Page Rotations is not valid JSON' }) : raw;
	return { ...input, page_rotations: pageRotations as IDataObject };
}

const PATHS: Record<string, string> = { merge: 'merge', extractPages: 'extract-pages', rotate: 'rotate' };

/** Runs the tool: the link answer as JSON and, when asked, the resulting PDF in a binary property. */
export async function runPdfTool(this: IExecuteFunctions, operation: string, i: number): Promise<INodeExecutionData[]> {
	const body = { ...(await toolBody.call(this, operation, i)), ...deliveryFields.call(this, i) };
	const answer = (await pressroomRequest.call(this, {
		method: 'POST',
		path: `/v1/pdf-tools/${PATHS[operation]}`,
		body,
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
