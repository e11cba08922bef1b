/** The PDF Tool resource's parameters: merge, extract pages, rotate; each input a URL or a binary property of the item. */
import type { INodeProperties } from 'n8n-workflow';

const singleInputOps = ['extractPages', 'rotate'];
const show = (operation: string[], extra: Record<string, string[]> = {}) => ({
	displayOptions: { show: { resource: ['pdfTool'], operation, ...extra } },
});

const INPUT_TYPES = [
	{
		name: 'Binary Property',
		value: 'binary',
		description: 'A PDF in this item, e.g. from Read Binary File or an earlier Pressroom node',
	},
	{
		name: 'URL',
		value: 'url',
		description: 'Pressroom downloads it: https, and no private address unless the deployment allows them',
	},
];

export const pdfToolProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['pdfTool'] } },
		options: [
			{
				name: 'Extract Pages',
				value: 'extractPages',
				action: 'Extract pages from a PDF',
				description: 'A new PDF of the pages named, in the order named',
			},
			{ name: 'Merge', value: 'merge', action: 'Merge PDFs', description: '2 to 20 PDFs into one, in the order given' },
			{
				name: 'Rotate',
				value: 'rotate',
				action: 'Rotate a PDF',
				description: 'Turn every page, or the pages named, clockwise',
			},
		],
		default: 'merge',
	},
	{
		displayName: 'PDFs',
		name: 'sources',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add PDF',
		default: {},
		description: 'At least 2, in the order their pages should follow',
		...show(['merge']),
		options: [
			{
				displayName: 'PDF',
				name: 'source',
				values: [
					{ displayName: 'Input', name: 'inputType', type: 'options', options: INPUT_TYPES, default: 'binary' },
					{
						displayName: 'Binary Property',
						name: 'binaryPropertyName',
						type: 'string',
						default: 'data',
						displayOptions: { show: { inputType: ['binary'] } },
					},
					{
						displayName: 'URL',
						name: 'url',
						type: 'string',
						default: '',
						displayOptions: { show: { inputType: ['url'] } },
					},
				],
			},
		],
	},
	{
		displayName: 'Input',
		name: 'inputType',
		type: 'options',
		options: INPUT_TYPES,
		default: 'binary',
		...show(singleInputOps),
	},
	{
		displayName: 'Input Binary Property',
		name: 'inputBinaryPropertyName',
		type: 'string',
		default: 'data',
		description: 'The binary property of the item that holds the PDF',
		...show(singleInputOps, { inputType: ['binary'] }),
	},
	{
		displayName: 'PDF URL',
		name: 'pdfUrl',
		type: 'string',
		default: '',
		required: true,
		...show(singleInputOps, { inputType: ['url'] }),
	},
	{
		displayName: 'Pages',
		name: 'pages',
		type: 'string',
		default: '',
		required: true,
		placeholder: '3, 1-2',
		description: '1-based pages and ranges; the order given is the order of the result ("5-3" is 5, 4, 3)',
		...show(['extractPages']),
	},
	{
		displayName: 'Rotate',
		name: 'rotateMode',
		type: 'options',
		options: [
			{ name: 'Every Page', value: 'all' },
			{ name: 'Some Pages', value: 'pages' },
		],
		default: 'all',
		...show(['rotate']),
	},
	{
		displayName: 'Rotation',
		name: 'rotation',
		type: 'options',
		options: [
			{ name: '90° Clockwise', value: 90 },
			{ name: '180°', value: 180 },
			{ name: '270° Clockwise', value: 270 },
		],
		default: 90,
		description: "Added to each page's own rotation",
		...show(['rotate'], { rotateMode: ['all'] }),
	},
	{
		displayName: 'Page Rotations',
		name: 'pageRotations',
		type: 'json',
		default: '{"1": 90}',
		description: 'Page number → 90, 180 or 270; the pages not named stay as they are',
		...show(['rotate'], { rotateMode: ['pages'] }),
	},
	{
		displayName: 'Options',
		name: 'toolOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		...show(['merge', 'extractPages', 'rotate']),
		options: [
			{
				displayName: 'Expiration (Seconds)',
				name: 'expiration',
				type: 'number',
				default: 86400,
				typeOptions: { minValue: 60, maxValue: 604800 },
			},
			{
				displayName: 'Filename',
				name: 'filename',
				type: 'string',
				default: '',
				description: 'Without .pdf: up to 100 letters, digits, _ - and .',
			},
		],
	},
];

/** "Download PDF" for every operation that ends in a link: the result becomes a binary property of the item. */
export const downloadProperties: INodeProperties[] = [
	{
		displayName: 'Download PDF',
		name: 'download',
		type: 'boolean',
		default: false,
		description:
			'Whether to download the result into a binary property as well as answer its link (for a job once it is completed; for a batch its zip or merged PDF)',
		displayOptions: {
			show: {
				resource: ['document', 'job', 'pdfTool', 'batch'],
				operation: ['generate', 'get', 'merge', 'extractPages', 'rotate'],
			},
		},
	},
	{
		displayName: 'Put Output File in Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		hint: 'The name of the output binary field to put the PDF in',
		displayOptions: {
			show: {
				resource: ['document', 'job', 'pdfTool', 'batch'],
				operation: ['generate', 'get', 'merge', 'extractPages', 'rotate'],
				download: [true],
			},
		},
	},
];
