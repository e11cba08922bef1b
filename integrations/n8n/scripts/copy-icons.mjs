// Copies each node's SVG icon beside its compiled file: n8n resolves `icon: 'file:…'` from there.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const node of readdirSync(join(root, 'nodes'))) {
	for (const file of readdirSync(join(root, 'nodes', node)).filter((name) => name.endsWith('.svg'))) {
		mkdirSync(join(root, 'dist', 'nodes', node), { recursive: true });
		copyFileSync(join(root, 'nodes', node, file), join(root, 'dist', 'nodes', node, file));
	}
}
// The trigger shows the same icon as the node.
copyFileSync(
	join(root, 'nodes', 'Pressroom', 'pressroom.svg'),
	join(root, 'dist', 'nodes', 'PressroomTrigger', 'pressroom.svg'),
);
