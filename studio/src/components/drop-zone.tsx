import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';

/** A box files can be dropped on (the Assets, PDF tools, Certificates and Validate e-invoice screens); it lights up while files are dragged over it. */
export function DropZone(props: {
  class?: string;
  testId: string;
  label?: string;
  onFiles(files: File[]): void;
  children: ComponentChildren;
}) {
  const [dragging, setDragging] = useState(false);
  return (
    <div
      role="region"
      aria-label={props.label ?? 'Drop files here'}
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

interface FileDropProps {
  /** The file input's id; `label` names it (visually hidden: the button is what people see). */
  id: string;
  label: string;
  accept: string;
  multiple?: boolean;
  /** The line above the button ("Drop a PDF here, or"). */
  prompt: ComponentChildren;
  /** The button that opens the file chooser ("Choose a PDF…"). */
  button: string;
  testId: string;
  onFiles(files: File[]): void;
}

/**
 * A drop zone with its own file chooser (the PDF tools, Validate e-invoice): dropped and picked files
 * arrive the same way. The input is emptied after each pick, so picking the same file again is a new pick.
 */
export function FileDrop({ id, label, accept, multiple, prompt, button, testId, onFiles }: FileDropProps) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <DropZone class="file-drop" testId={testId} onFiles={onFiles}>
      <p>{prompt}</p>
      <label for={id} class="visually-hidden">
        {label}
      </label>
      <input
        id={id}
        ref={input}
        class="visually-hidden"
        type="file"
        accept={accept}
        multiple={multiple}
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = '';
          onFiles(files);
        }}
      />
      <button type="button" class="button" onClick={() => input.current?.click()}>
        {button}
      </button>
    </DropZone>
  );
}
