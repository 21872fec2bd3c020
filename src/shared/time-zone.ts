/** Time zones as people type them, checked once for settings and schedules alike. */

/** True for an IANA zone name Intl knows ("Asia/Shanghai", "UTC"). */
export function isTimeZoneName(name: string): boolean {
  if (!name || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
