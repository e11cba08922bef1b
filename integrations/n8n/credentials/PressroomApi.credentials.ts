import type { IAuthenticateGeneric, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';

/** A Pressroom deployment (its base URL) and an API key of one account; optionally the secret that signs its job webhooks. */
export class PressroomApi implements ICredentialType {
	name = 'pressroomApi';

	displayName = 'Pressroom API';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: 'http://localhost:8080',
			required: true,
			placeholder: 'https://pdf.example.com',
			description: "Your Pressroom's address, the value of its PRESSROOM_PUBLIC_URL (its routes start at /v1/)",
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: "A Pressroom API key (pr_…): `pressroom accounts create`, the admin API, or the studio's key screen",
		},
		{
			displayName: 'Webhook Secret',
			name: 'webhookSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'16–256 characters. Generate PDF (Async) sends it as webhook_secret when a webhook URL is set, and the Pressroom Trigger checks the signatures with it. Leave empty if you do not use webhooks.',
		},
	];

	// Pressroom reads the key from x-api-key (or Authorization: Bearer).
	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: { headers: { 'x-api-key': '={{$credentials.apiKey}}' } },
	};

	// GET /v1/account is free and needs a valid key: 401 otherwise. Under a wrong base URL Pressroom
	// answers 404; an answer without `credits` is some other site's page. (n8n takes one kind of rule.)
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/v1/account',
			method: 'GET',
		},
		rules: [
			{
				type: 'responseSuccessBody',
				properties: {
					key: 'credits',
					value: undefined,
					message:
						"This address answers, but not as Pressroom's API: give the address Pressroom is served at, without /v1",
				},
			},
		],
	};
}
