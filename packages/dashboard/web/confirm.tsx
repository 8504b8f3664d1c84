import type { ComponentChildren } from 'preact';

/**
 * The confirmation every control of the page asks for before it changes anything (a pause, a
 * cancel, a directive, an approval): a modal that says what will be done, a "Confirm ACTION"
 * button and "Back", which sends nothing.
 */
export function Confirm({
  action,
  children,
  onConfirm,
  onBack,
}: {
  action: string;
  children: ComponentChildren;
  onConfirm: () => void;
  onBack: () => void;
}) {
  return (
    <div class="dialog-backdrop">
      <div class="dialog" role="dialog" aria-modal="true" aria-label="Confirm">
        <p>{children}</p>
        <button class="danger" onClick={onConfirm}>
          Confirm {action}
        </button>
        <button onClick={onBack}>Back</button>
      </div>
    </div>
  );
}
