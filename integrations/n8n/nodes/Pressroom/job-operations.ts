/** Job → Get (optionally waiting for the job to end) and Job → Get Many. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import { downloadPdf, pressroomRequest } from './pressroom-api';

/** docs/jobs.md suggests polling every 1–2 s for small documents. */
const POLL_INTERVAL_MS = 1000;

const isFinished = (job: IDataObject) => job.status === 'completed' || job.status === 'failed';

async function readJob(this: IExecuteFunctions, jobId: string, i: number): Promise<IDataObject> {
	return (await pressroomRequest.call(this, {
		method: 'GET',
		path: `/v1/pdf/jobs/${encodeURIComponent(jobId)}`,
		itemIndex: i,
	})) as IDataObject;
}

/** Get: the job; with "Wait for Completion", polled until it ends; with "Download PDF", its result as binary. */
export async function getJob(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
	const jobId = (this.getNodeParameter('jobId', i) as string).trim();
	let job = await readJob.call(this, jobId, i);
	if (this.getNodeParameter('waitForCompletion', i, false)) {
		const deadline = Date.now() + (this.getNodeParameter('waitTimeoutSeconds', i, 120) as number) * 1000;
		while (!isFinished(job)) {
			if (Date.now() >= deadline) {
				throw new NodeOperationError(
					this.getNode(),
					`Job ${jobId} is still ${String(job.status)} after the timeout; raise "Timeout (Seconds)" or poll again later`,
					{ itemIndex: i },
				);
			}
			await sleep(POLL_INTERVAL_MS);
			// A cancelled execution stops waiting at the next poll.
			if (this.getExecutionCancelSignal()?.aborted)
				throw new NodeOperationError(this.getNode(), `Stopped waiting for job ${jobId}: the execution was cancelled`, {
					itemIndex: i,
				});
			job = await readJob.call(this, jobId, i);
		}
	}
	if (!this.getNodeParameter('download', i, false)) return [{ json: job }];
	if (job.status !== 'completed' || typeof job.result_url !== 'string') {
		const reason =
			job.status === 'failed'
				? `failed: ${String(job.error_code)}: ${String(job.error_message)}`
				: `${String(job.status)}, not completed yet (use "Wait for Completion")`;
		throw new NodeOperationError(this.getNode(), `Job ${jobId} has no PDF to download: it is ${reason}`, {
			itemIndex: i,
		});
	}
	const property = this.getNodeParameter('binaryPropertyName', i, 'data') as string;
	const binary = await downloadPdf.call(this, {
		url: job.result_url,
		filename: String(job.result_filename ?? 'document.pdf'),
		itemIndex: i,
	});
	return [{ json: job, binary: { [property]: binary } }];
}

/** Get Many: one item per job, newest first. */
export async function getJobs(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
	const filters = this.getNodeParameter('filters', i, {}) as IDataObject;
	const qs: IDataObject = { limit: this.getNodeParameter('limit', i, 20) };
	if (filters.offset !== undefined) qs.offset = filters.offset;
	if (filters.status) qs.status = filters.status;
	const answer = (await pressroomRequest.call(this, { method: 'GET', path: '/v1/pdf/jobs', qs, itemIndex: i })) as {
		jobs: IDataObject[];
	};
	return answer.jobs.map((job) => ({ json: job }));
}
