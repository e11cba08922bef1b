import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** A box files can be dropped on (the Assets and PDF tools screens); it lights up while files are dragged over it. */
export function DropZone(props: { class?: string; testId: string; onFiles(files: File[]): void; children: ComponentChildren }) {
  const [dragging, setDragging] = useState(false);
  return (
    <div
      class={`asset-drop ${props.class ?? ''} ${dragging ? 'asset-drop-active' : ''}`}
      data-testid={props.testId}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        props.onFiles([...(e.dataTransfer?.files ?? [])]);
      }}
    >
      {props.children}
    </div>
  );
}
