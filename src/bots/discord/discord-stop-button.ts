/**
 * The "Stop" button shown under a reply while it is still being written. The reply port
 * attaches it; the adapter answers its clicks (custom_id `stop`) with gateway.stop.
 */

/** custom_id of the Stop button (Discord echoes it in the INTERACTION_CREATE it sends on a click). */
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
