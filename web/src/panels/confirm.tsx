/** A confirmation step for admin actions: a modal dialog that names the action and its consequence. */
import { useEffect, useRef } from 'preact/hooks';

export interface Pending {
  title: string;
  detail: string;
  confirmLabel: string;
  run: () => Promise<void>;
}

export function ConfirmDialog({ pending, onClose }: { pending: Pending | null; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (pending && !dialog.current?.open) dialog.current?.showModal();
    if (!pending && dialog.current?.open) dialog.current.close();
  }, [pending]);
  return (
    <dialog ref={dialog} onClose={onClose} aria-labelledby="confirm-title" data-testid="confirm">
      {pending && (
        <div>
          <h3 id="confirm-title">{pending.title}</h3>
          <p>{pending.detail}</p>
          <div class="actions">
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button
              type="button"
              class="danger"
              onClick={() => {
                const run = pending.run;
                onClose();
                void run();
              }}
            >
              {pending.confirmLabel}
            </button>
          </div>
        </div>
      )}
    </dialog>
  );
}
