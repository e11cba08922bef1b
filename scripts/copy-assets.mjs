// Copies the non-TypeScript files the compiled service reads at run time (the sRGB ICC profile for
// PDF/A) and bundles the template language's browser-side code (src/template-language/browser)
// next to the compiled module that reads it (dist/template-language/browser-code.js).
import { cpSync } from 'node:fs';

cpSync('src/finishing/assets', 'dist/finishing/assets', { recursive: true });
const { writeBrowserCode } = await import('../dist/template-language/browser-code.js');
writeBrowserCode('src/template-language/browser', 'dist/template-language/browser');
