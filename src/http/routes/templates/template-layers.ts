/** `GET /v1/templates/{template_id}/layers`: what `modifications` of POST /v1/image/create can address. No credits. */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MAX_CURRENT_TEXT_CHARS, MAX_TEMPLATE_LAYERS } from '../../../templates/layers/template-layers.js';
import type { TemplateLayer, TemplateService } from '../../../templates/templates.js';
import { StringEnum, TEMPLATE_ID, errorResponses } from '../../schemas.js';

const Layer = Type.Object(
  {
    name: Type.String({
      description: 'Layer name — the value to use in `modifications[].name`',
      examples: ['headline'],
    }),
    tag: Type.String({
      description: 'HTML tag of the element (`body` for the page itself as the background layer)',
      examples: ['h1'],
    }),
    type: StringEnum(['text', 'image', 'shape', 'background'] as const, {
      description: 'Layer type: `background`, `image`, `text` or `shape`',
      examples: ['text'],
    }),
    current_text: Type.Optional(
      Type.String({
        description: `Text layers: the element's text as written in the template, \`{{ }}\` placeholders included (its first ${MAX_CURRENT_TEXT_CHARS} characters, then …)`,
        examples: ['Hello {{ name }}'],
      }),
    ),
    modifiable: Type.Array(Type.String(), {
      description: 'Modification fields that apply to this layer',
      examples: [['text', 'color', 'background', 'image_url', 'hidden']],
    }),
  },
  {
    $id: 'TemplateLayer',
    description: 'An addressable layer of a template (an element with `data-layer` or `data-layer-name`)',
  },
);

const LayersResponse = Type.Object({
  layers: Type.Array(Type.Unsafe<Static<typeof Layer>>({ $ref: 'TemplateLayer#' }), {
    description: 'Every named layer in document order; the reserved `background` layer is always present',
  }),
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'Non-fatal issues (e.g. duplicate layer names)' })),
});

function view(layer: TemplateLayer): Static<typeof Layer> {
  return {
    name: layer.name,
    tag: layer.tag,
    type: layer.type,
    ...(layer.currentText === undefined ? {} : { current_text: layer.currentText }),
    modifiable: layer.modifiable,
  };
}

/** Registers the layers route. */
export function templateLayerRoutes(app: FastifyInstance, templates: TemplateService): void {
  app.addSchema(Layer);
  app.withTypeProvider<TypeBoxTypeProvider>().get('/v1/templates/:template_id/layers', {
    config: { auth: 'read' },
    schema: {
      tags: ['Templates'],
      operationId: 'getTemplateLayers',
      summary: 'Get template layers',
      description:
        'The addressable layers of a template: elements marked `data-layer="name"` (or `data-layer-name`). ' +
        '`POST /v1/image/create` targets them by name in `modifications` — the counterpart of `/fields` for `{{ }}` variables. ' +
        'The reserved `background` layer is always present: the element named `background`, or else the page itself. No credits. ' +
        `A template with more than ${MAX_TEMPLATE_LAYERS} layer elements answers 422 DOCUMENT_TOO_LARGE (bound \`layers\`); \`current_text\` is cut at ${MAX_CURRENT_TEXT_CHARS} characters (ending in …).`,
      params: Type.Object({ template_id: TEMPLATE_ID }),
      response: { 200: LayersResponse, ...errorResponses(401, 403, 404, 422, 429, 503, 504) },
    },
    handler: async (request) => {
      const { layers, warnings } = await templates.layers(request.caller.accountId, request.params.template_id);
      return { layers: layers.map(view), ...(warnings.length > 0 ? { warnings } : {}) };
    },
  });
}
