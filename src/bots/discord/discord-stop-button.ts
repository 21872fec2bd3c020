/** The "Stop" button under a reply still being written: the reply port attaches it, the adapter answers it. */

/** custom_id of the Stop button (Discord echoes it in the click's INTERACTION_CREATE). */
export const STOP_BUTTON_ID = "stop";

/** An action row holding the Stop button, as Discord's message `components` expect it. */
export function stopButtonRow(): {
  type: 1;
  components: { type: 2; style: 2; label: string; emoji: { name: string }; custom_id: string }[];
} {
  // Style 2 (secondary/grey): it is a control, not a destructive action.
  return {
    type: 1,
    components: [{ type: 2, style: 2, label: "Stop", emoji: { name: "⏹️" }, custom_id: STOP_BUTTON_ID }],
  };
}
