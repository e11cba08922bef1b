/** What the editor offers: the account's templates, a template's versions, and its fields as inputs. */
import type {
	FieldType,
	ILoadOptionsFunctions,
	INodePropertyOptions,
	ResourceMapperField,
	ResourceMapperFields,
} from 'n8n-workflow';
import { pressroomRequest } from './pressroom-api';

/** A field as GET /v1/templates/{id}/fields lists it. */
interface TemplateField {
	key: string;
	label?: string;
	type?: 'string' | 'integer' | 'number' | 'boolean' | 'array';
	required?: boolean;
	helpText?: string | null;
}

const FIELD_TYPES: Record<NonNullable<TemplateField['type']>, FieldType> = {
	string: 'string',
	integer: 'number',
	number: 'number',
	boolean: 'boolean',
	// n8n takes a JSON array typed into the input, e.g. [{"name": "Tea", "qty": 2}].
	array: 'array',
};

function currentTemplateId(context: ILoadOptionsFunctions): string {
	return String(context.getCurrentNodeParameter('templateId') ?? '').trim();
}

/** The account's PDF templates, newest first (GET /v1/templates?kind=pdf). */
export async function getTemplates(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const answer = (await pressroomRequest.call(this, { method: 'GET', path: '/v1/templates', qs: { kind: 'pdf' } })) as {
		templates: Array<{ id: string; name: string }>;
	};
	return answer.templates.map((template) => ({ name: template.name, value: template.id, description: template.id }));
}

/** The draft, then the template's published versions by tag (GET /v1/templates/{id}/versions). */
export async function getTemplateVersions(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const draft = { name: 'Draft (the Template as Saved Now)', value: '' };
	const templateId = currentTemplateId(this);
	if (!templateId) return [draft];
	const answer = (await pressroomRequest.call(this, {
		method: 'GET',
		path: `/v1/templates/${encodeURIComponent(templateId)}/versions`,
	})) as {
		versions: Array<{ version_number: number; tag: string | null; description: string | null }>;
	};
	const versions = answer.versions.map((version) => ({
		name: version.tag ? `${version.tag} (version ${version.version_number})` : `Version ${version.version_number}`,
		value: version.tag ?? String(version.version_number),
		description: version.description ?? undefined,
	}));
	return [draft, ...versions];
}

/** The template's fields as the resource mapper's inputs (GET /v1/templates/{id}/fields). */
export async function getTemplateFields(this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
	const templateId = currentTemplateId(this);
	if (!templateId) return { fields: [], emptyFieldsNotice: 'Choose a template first' };
	const fields = (await pressroomRequest.call(this, {
		method: 'GET',
		path: `/v1/templates/${encodeURIComponent(templateId)}/fields`,
	})) as TemplateField[];
	return {
		fields: fields.map(
			(field): ResourceMapperField => ({
				id: field.key,
				displayName: field.label && field.label !== field.key ? `${field.label} (${field.key})` : field.key,
				required: field.required ?? false,
				defaultMatch: false,
				canBeUsedToMatch: false,
				display: true,
				type: FIELD_TYPES[field.type ?? 'string'] ?? 'string',
			}),
		),
	};
}
