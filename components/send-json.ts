import { networkErrorMessage } from "@/components/network-error";

/** A route handler's answer: its `data`, or its error message (a request that never arrived is status 0). */
export type JsonResult<T = unknown> =
  | { ok: true; status: number; data: T }
  | { ok: false; status: number; message: string };

/**
 * Sends a JSON request to one of Conduit's route handlers and reads the `{data}` or
 * `{error:{message}}` answer. Never throws: a network failure is a result too, so every busy
 * button can recover.
 */
export async function sendJson<T = unknown>(url: string, method: string, body?: unknown): Promise<JsonResult<T>> {
  try {
    const res = await fetch(url, {
      method,
      headers: body === undefined ? undefined : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await res.json().catch(() => null)) as { data?: T; error?: { message?: string } } | null;
    if (res.ok) return { ok: true, status: res.status, data: parsed?.data as T };
    return { ok: false, status: res.status, message: parsed?.error?.message ?? `Request failed (${res.status}).` };
  } catch {
    return { ok: false, status: 0, message: networkErrorMessage };
  }
}

/** For forms that only need to know what went wrong: the message to show, or undefined on success. */
export async function sendForError(url: string, method: string, body?: unknown): Promise<string | undefined> {
  const result = await sendJson(url, method, body);
  return result.ok ? undefined : result.message;
}
