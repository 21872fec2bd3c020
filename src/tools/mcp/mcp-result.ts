/**
 * An MCP `tools/call` result as the observation the model reads: text joined, `structuredContent` as JSON,
 * and one line for each image, audio clip and resource (a small model can do nothing with base64).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type Content = CallToolResult["content"][number];

/** The observation text of a result (whether or not it is an error). */
export function formatToolResult(result: Pick<CallToolResult, "content" | "structuredContent">): string {
  const structured = result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : undefined;
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    // Servers SHOULD repeat structured content as JSON text for old clients: send it once.
    if (item.type === "text" && structured !== undefined && sameJson(item.text, result.structuredContent)) continue;
    parts.push(describeContent(item));
  }
  if (structured !== undefined) parts.push(structured);
  return parts.length ? parts.join("\n") : "(the tool returned no content)";
}

function describeContent(item: Content): string {
  switch (item.type) {
    case "text":
      return item.text;
    case "image":
      return `[image: ${item.mimeType}, ${formatBytes(base64Bytes(item.data))}]`;
    case "audio":
      return `[audio: ${item.mimeType}, ${formatBytes(base64Bytes(item.data))}]`;
    case "resource_link":
      return `[resource link: ${item.name} ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ""}]`;
    case "resource": {
      const r = item.resource;
      const size =
        "text" in r && typeof r.text === "string"
          ? `${r.text.length} characters`
          : "blob" in r
            ? formatBytes(base64Bytes(r.blob))
            : "";
      return `[resource: ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}${size ? `, ${size}` : ""}]`;
    }
    default:
      return `[${(item as { type?: unknown }).type ?? "unknown"} content]`;
  }
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false; // plain text beside the structured content: keep it
  }
}

function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function formatBytes(bytes: number): string {
  return bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} kB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
