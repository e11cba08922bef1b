// Copies the non-TypeScript files the compiled service reads at run time (the sRGB ICC profile for PDF/A).
import { cpSync } from 'node:fs';

cpSync('src/rendering/assets', 'dist/rendering/assets', { recursive: true });
