/**
 * Checks a Pressroom webhook as docs/webhooks.md describes: `webhook-signature` is `v1,` + base64
 * HMAC-SHA256, keyed with the secret's UTF-8 bytes, of `${webhook-id}.${webhook-timestamp}.${raw body}`.
 */
import { createHmac, timingSafeEqual } from 'crypto';
import type { IncomingHttpHeaders } from 'http';

/** Standard Webhooks' recommended window: an older (or future) timestamp is refused as a possible replay. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

export type Verdict = { ok: true } | { ok: false; reason: string };

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
	const value = headers[name];
	return Array.isArray(value) ? value[0] : value;
};

/** Whether the raw body and headers carry a valid signature made with `secret`, at a time within the tolerance. */
export function verifyPressroomWebhook(input: {
	rawBody: Buffer;
	headers: IncomingHttpHeaders;
	secret: string;
	nowSeconds: number;
}): Verdict {
	const id = header(input.headers, 'webhook-id');
	const timestamp = header(input.headers, 'webhook-timestamp');
	const signatures = header(input.headers, 'webhook-signature');
	if (!id || !timestamp)
		return { ok: false, reason: 'webhook-id or webhook-timestamp missing: not a Pressroom webhook' };
	if (!signatures)
		return {
			ok: false,
			reason: "webhook-signature missing: create the job with the webhook secret (the credential's Webhook Secret)",
		};
	if (!/^\d{1,12}$/.test(timestamp) || Math.abs(input.nowSeconds - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) {
		return {
			ok: false,
			reason: `webhook-timestamp is more than ${TIMESTAMP_TOLERANCE_SECONDS} s away from this machine's clock`,
		};
	}
	const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), input.rawBody]);
	const expected = Buffer.from(
		`v1,${createHmac('sha256', Buffer.from(input.secret, 'utf8')).update(signed).digest('base64')}`,
	);
	// Several space-separated signatures may be sent (Standard Webhooks, while a secret is rotated).
	const matches = signatures.split(' ').some((given) => {
		const bytes = Buffer.from(given);
		return bytes.length === expected.length && timingSafeEqual(bytes, expected);
	});
	return matches
		? { ok: true }
		: { ok: false, reason: 'webhook-signature does not match: the secret differs, or the body was changed' };
}
