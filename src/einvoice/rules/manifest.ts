/**
 * The rules pack's inputs (issue 41): every official file the pack is built from, pinned to a commit of
 * its publisher's repository, with its SHA-256. `pressroom einvoice rules install` fetches each from
 * `https://raw.githubusercontent.com/<repository>/<commit>/<path>` (or reads `<dir>/<folder>/<path>` with
 * `--from <dir>`) and refuses the whole install when one hash differs. Nothing of these files is in
 * the project: only their addresses and hashes (docs/einvoice.md "The official rules").
 *
 * The hashes were taken from the publishers' repositories at these commits (git blobs, which are what
 * the raw URLs serve) and agree with the SHA256SUMS of the copy the tests install from.
 */

/** One upstream repository at a fixed commit, and the folder a local copy keeps its files in. */
export interface PackSource {
  /** The folder of `--from DIR` holding this source's files, under their repository paths. */
  readonly folder: string;
  readonly name: string;
  readonly version: string;
  /** `owner/name` on GitHub. */
  readonly repository: string;
  /** The full commit (a tag's commit where the publisher tagged the release). */
  readonly commit: string;
  readonly licence: string;
}

export const SOURCES = {
  en16931: {
    folder: 'en16931-1.3.16',
    name: 'CEN/TC 434 EN 16931 validation artefacts',
    version: '1.3.16',
    repository: 'ConnectingEurope/eInvoicing-EN16931',
    commit: 'b6c9e06a59812fb1a83585da40923b3678a649ad',
    licence: 'EUPL-1.2',
  },
  ubl: {
    folder: 'ubl-2.1',
    name: 'OASIS UBL 2.1 schemas',
    version: '2.1',
    // A copy of the OASIS release package's xsd/ (the publisher's site serves no fixed-commit URL).
    repository: 'kduvekot/ubl-release-package',
    commit: '69d9f20189fe7fa551dcc59f17d8480e70cda970',
    licence: 'OASIS (notice in each file)',
  },
  xrechnung: {
    folder: 'xrechnung-schematron-2.5.0',
    name: 'KoSIT XRechnung schematron',
    version: '2.5.0',
    repository: 'itplr-kosit/xrechnung-schematron',
    commit: 'c4eb3dae54d65d60875a85c392122b5721a1108d',
    licence: 'Apache-2.0',
  },
  peppol: {
    folder: 'peppol-bis-billing-3.0.19',
    name: 'OpenPEPPOL BIS Billing 3.0 rules',
    version: '3.0.19',
    repository: 'OpenPEPPOL/peppol-bis-invoice-3',
    commit: '78d7f7dfa223f39f8ebd8d35c127f2690e646322',
    licence: 'published by OpenPEPPOL for implementers (notice in each file)',
  },
  schxslt: {
    folder: 'schxslt-1.10.1',
    name: 'SchXslt',
    version: '1.10.1',
    repository: 'schxslt/schxslt',
    commit: '17f63a42c2d417206e1289cf767359c4fa047919',
    licence: 'MIT',
  },
} as const satisfies Record<string, PackSource>;

export type SourceId = keyof typeof SOURCES;

/** One pinned file: its source, its path in that repository, and its SHA-256 (hex). */
export interface PackFile {
  readonly source: SourceId;
  readonly path: string;
  readonly sha256: string;
  /**
   * The hash of the same file as a git checkout writes it, where the repository's .gitattributes
   * rewrites its line endings (the raw URL serves the blob's LF, a checkout CRLF): a local copy may be either.
   */
  readonly checkoutSha256?: string;
}

const SCHXSLT = 'core/src/main/resources/xslt/2.0';

export const PACK_FILES: readonly PackFile[] = [
  {
    source: 'en16931',
    path: 'cii/xslt/EN16931-CII-validation.xslt',
    sha256: '0b234dea2bbfee739b7761e607a992c17fab88773014ef56355b6158cfb1cc53',
  },
  {
    source: 'en16931',
    path: 'ubl/xslt/EN16931-UBL-validation.xslt',
    sha256: '39f9d282867f1a49e7708d9e29a53da89643e1ee56f10cec1ebcf1277595fcbd',
  },
  {
    source: 'en16931',
    path: 'LICENSE.txt',
    sha256: 'fc22ec1dcd8bee4636a395fb332e2308cde870fb3fdc71a2e260b919877cdef5',
    checkoutSha256: '281eed0c9d46e36be532978deb16e6351025c6ff32d97fe24e8cb190e4e0d923',
  },
  {
    source: 'ubl',
    path: 'xsd/maindoc/UBL-Invoice-2.1.xsd',
    sha256: '40fae8cb436f3a9506d7acce65ba162caef3b0bed4d5cbc0992b2153ded4edf4',
  },
  {
    source: 'ubl',
    path: 'xsd/maindoc/UBL-CreditNote-2.1.xsd',
    sha256: 'a54651b1225052f811bf2ba01346f13f2454e7cc3e0be290c91dd680dc7b7b1a',
  },
  {
    source: 'ubl',
    path: 'xsd/common/CCTS_CCT_SchemaModule-2.1.xsd',
    sha256: 'dd546e4809df86b6445589f69f0d6c9df162840ae386574ddfc1da7638103e15',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-CommonAggregateComponents-2.1.xsd',
    sha256: '939172ad8dd057cd403e7f763f6532184dd5ed4b9de24c42ebb35db4792ba613',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-CommonBasicComponents-2.1.xsd',
    sha256: 'bd4ad043ee1d9da1c7f8018dabf739cfafdfb59143d0d16b9ef769e6b7c408a7',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-CommonExtensionComponents-2.1.xsd',
    sha256: 'ad7a4e490978adfbcfc5ec0bb20941cf11ac960ccf0c4de8791a7c731a8dbe87',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-CommonSignatureComponents-2.1.xsd',
    sha256: '3db472305f029bba5c1ae157bfd0178f715c3f9b94bd8e6c557dbce5e88da874',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-CoreComponentParameters-2.1.xsd',
    sha256: '8be3379dbdcbcc7802fafdd16bac72c48fff1c0bb364213a31a17911dd06100b',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-ExtensionContentDataType-2.1.xsd',
    sha256: 'fcee77a11870208e6377ea6311b9f2a050bca24bdad8606ea02d71e9f9e72f8d',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-QualifiedDataTypes-2.1.xsd',
    sha256: '7dcb156e610239c97ae70940cf4653b88e48c3595bf5f56a2204a32e2893e6cf',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-SignatureAggregateComponents-2.1.xsd',
    sha256: '17bb6b62d709b4fd81449a37655af36aa6a1276ad4fdb1b2e249a5ed4b7c2172',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-SignatureBasicComponents-2.1.xsd',
    sha256: 'cef924d7ba3d1d8ade14469325cde1364f8c174e46f0198ec02da8e9e748a489',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-UnqualifiedDataTypes-2.1.xsd',
    sha256: '09052d406b4293e2a5f9c2bfee6df10ad4d8d5f0b36e24a6349d7f7936d89eb6',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-XAdESv132-2.1.xsd',
    sha256: 'a4f726bcf8cc3f7d9ffa4dab99e005535a8e8b60dced1e5d94578d2e05afa96e',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-XAdESv141-2.1.xsd',
    sha256: '1fa4625e9cefcb7a9abb5ac1b64315547450031eece8a55bd584e4ba4b79dbc1',
  },
  {
    source: 'ubl',
    path: 'xsd/common/UBL-xmldsig-core-schema-2.1.xsd',
    sha256: '101909c9f06456d61ddcc4fb982f1d40dc357b439f393b1a2eb46e42acd60809',
  },
  {
    source: 'xrechnung',
    path: 'src/validation/schematron/cii/XRechnung-CII-validation.sch',
    sha256: '4a29e3ecaa3719c273e4939d4dcc825754e6345a5db07a40bb64ed309dece146',
  },
  {
    source: 'xrechnung',
    path: 'src/validation/schematron/ubl/XRechnung-UBL-validation.sch',
    sha256: '0b2838a9dab49ccd7381ad7547cdcc3348a3d861ee27ddeb4065db05e679c4ef',
  },
  {
    source: 'xrechnung',
    path: 'src/validation/schematron/common.sch',
    sha256: 'a05e3db78ed0e93a2dc5ee64ab2c1766480cb9ca22b0bd62e8e222647007ac7d',
  },
  {
    source: 'xrechnung',
    path: 'src/xsl/peppol-into-xr.xsl',
    sha256: 'f2ab6ef8cb4c77476007fe3bab84dcc4367f2367cd6770083d98344875d0d717',
  },
  {
    source: 'xrechnung',
    path: 'src/xsl/rule-list.xml',
    sha256: '3191db4c4346bf3458f2c5570a473bfed8e5d68e91e249c6bd5c0b36d26e0dc2',
  },
  { source: 'xrechnung', path: 'LICENSE', sha256: '57e93bb611b8aeb93ff0f23b271a23291217b0016f6e66297dfd5e9467538a5f' },
  {
    source: 'peppol',
    path: 'rules/sch/PEPPOL-EN16931-CII.sch',
    sha256: '78dcef8d4a2d502e16affbb342f319aaea985da5b1154d529c8627fb628e7a89',
  },
  {
    source: 'peppol',
    path: 'rules/sch/PEPPOL-EN16931-UBL.sch',
    sha256: '2840f5158f7bbdbf3b3f5d2ea391b9ac9e649e1fdbba8502bd8c15ec52924f23',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/pipeline-for-svrl.xsl`,
    sha256: '64a535e6d0f0baa809f987d27d9e5b825d420e9ebda7344ef53edf136cdd42fa',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/svrl.xsl`,
    sha256: 'd2d8ea16cdbb6b0d0efd6d39955459ebcdf511000c24dda38220961f1d7e2611',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/pipeline.xsl`,
    sha256: 'd0189741f5e6119b76b6914413e1a7c92427efef6f2ecb9b2c34e833c533ec1f',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/expand.xsl`,
    sha256: '97bc8bee61b23592fe4937f261b47cb0e3725c25516084a9788d33e102cbba79',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/include.xsl`,
    sha256: 'ab6f9359c7a1a17a589568d91bab766f53fc98064beb8cc976e6e3319afb2b24',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/version.xsl`,
    sha256: '58e1b29b21df2be5233739fa9787fe2316b0438d03cad380e17acd3af4481582',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/compile/compile-2.0.xsl`,
    sha256: '5f24b8b28be50d650542c5113185ed55983beeaad061eddc4b966ca354751a57',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/compile/api-2.0.xsl`,
    sha256: 'd4df046564af3ba3d9f10976e29cbea1a6c45c746e3e53efcea8377c42c3c8e9',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/compile/functions.xsl`,
    sha256: 'e7d96717677ac768a72edda3b9f45e67c40476525247906271c42b652cf3b397',
  },
  {
    source: 'schxslt',
    path: `${SCHXSLT}/compile/templates.xsl`,
    sha256: 'afd07c44eeb70b8e9daf0feb1319ca655468f06543437c8ecf0e5a232b3038c8',
  },
  { source: 'schxslt', path: 'LICENSE', sha256: '74a1f0e7dcb8d2d4a619180c331e1ed5692850cc278866fc21f460e1252f2f42' },
];

/** Where the installer downloads a file from. */
export function upstreamUrl(file: PackFile): string {
  const source = SOURCES[file.source];
  return `https://raw.githubusercontent.com/${source.repository}/${source.commit}/${file.path}`;
}

/** Where a file is in a local copy (`--from DIR`) and in the pack: `<folder>/<path>`. */
export function localPath(file: PackFile): string {
  return `${SOURCES[file.source].folder}/${file.path}`;
}

/** The path (in the pack's `source/`) of the file of `source` at `path`; throws for a file the manifest does not pin. */
export function pinned(source: SourceId, path: string): string {
  const file = PACK_FILES.find((f) => f.source === source && f.path === path);
  if (!file) throw new Error(`${source}:${path} is not in the rules pack manifest`);
  return localPath(file);
}

/** The XRechnung version KoSIT's schematron 2.5.0 is for: its build.xml's `xrechnung.version`, a token the build fills into the rules. */
export const XRECHNUNG_VERSION = '3.0.2';

/** How answers, /readyz and `rules status` name the rule sets: `EN16931 1.3.16`, `XRechnung 3.0.2`. */
export const RULE_SET_NAMES = {
  en16931: `EN16931 ${SOURCES.en16931.version}`,
  xrechnung: `XRechnung ${XRECHNUNG_VERSION}`,
} as const;
