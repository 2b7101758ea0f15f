import { expect, test, createWorkspace, sameOrigin, sendPrompt, signedInPage, startSession, uniqueEmail, type Page } from "./fixtures";

/** A real 1×1 PNG. */
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** Pastes files into the prompt box as the clipboard would (a screenshot arrives as a File). */
async function pasteFiles(page: Page, files: { name: string; type: string; base64: string }[]): Promise<void> {
  await page.getByTestId("prompt-input").evaluate((el, list) => {
    const data = new DataTransfer();
    for (const f of list) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      data.items.add(new File([bytes], f.name, { type: f.type }));
    }
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, files);
}

async function openSession(page: Page, name: string): Promise<{ slug: string }> {
  const ws = await createWorkspace(page, name);
  // a file for @ mentions
  const file = await page.request.put(`/api/workspaces/${ws.slug}/files/content`, {
    headers: sameOrigin,
    data: { path: "notes/hello-world.md", content: "# hello\n", baseVersion: null },
  });
  expect(file.status(), await file.text()).toBeLessThan(300);
  await page.goto(`/w/${ws.slug}`);
  await startSession(page);
  return ws;
}

test("/ opens the slash commands, @ the workspace's files, both by keyboard", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("pia"), `Pia ${stamp}`);
  try {
    await openSession(page, `Prompt ${stamp}`);
    await sendPrompt(page, "hello");
    await expect(page.getByTestId("turn-end")).toHaveCount(1, { timeout: 30_000 });

    const input = page.getByTestId("prompt-input");
    await input.fill("/");
    const slash = page.getByTestId("slash-menu");
    await expect(slash).toBeVisible();
    await expect(slash.getByTestId("slash-item").first()).toBeVisible();
    await input.pressSequentially("compa");
    const first = slash.getByTestId("slash-item").first();
    await expect(first).toHaveAttribute("data-command", "compact");
    // the CLI's description came along
    await expect(first).toContainText(/\S+\s+\S+/);
    await input.press("Enter");
    await expect(input).toHaveValue("/compact ");
    await expect(slash).toHaveCount(0);
    // Esc closes the menu without touching the text
    await input.fill("/c");
    await expect(slash).toBeVisible();
    await input.press("Escape");
    await expect(slash).toHaveCount(0);
    await expect(input).toHaveValue("/c");

    // @ asks the CLI for files (it indexes the workspace on the first ask)
    await input.fill("see @hellowor");
    const mention = page.getByTestId("mention-menu");
    await expect(mention).toBeVisible();
    const item = mention.locator('[data-testid="mention-item"][data-path="notes/hello-world.md"]');
    await expect
      .poll(
        async () => {
          if ((await item.count()) > 0) return true;
          // ask again: type a character and take it back
          await input.press("End");
          await input.pressSequentially("l");
          await input.press("Backspace");
          return false;
        },
        { timeout: 20_000 },
      )
      .toBe(true);
    await mention.getByTestId("mention-item").first().waitFor();
    // ↓ / ↑ move the choice; Enter inserts the path
    const items = mention.getByTestId("mention-item");
    const index = await items.evaluateAll(
      (els) => els.findIndex((el) => el.getAttribute("data-path") === "notes/hello-world.md"),
    );
    for (let i = 0; i < index; i++) await input.press("ArrowDown");
    await input.press("Enter");
    await expect(input).toHaveValue("see @notes/hello-world.md ");

    // the draft survives a reload
    await input.fill("a draft to keep");
    await page.reload();
    await expect(page.getByTestId("prompt-input")).toHaveValue("a draft to keep");
  } finally {
    await page.context().close();
  }
});

test("a pasted image is attached, can be removed, is sent and shows in the conversation", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("ian"), `Ian ${stamp}`);
  try {
    const ws = await openSession(page, `Images ${stamp}`);
    await pasteFiles(page, [{ name: "shot.png", type: "image/png", base64: pngBase64 }]);
    await expect(page.getByTestId("prompt-attachment")).toHaveCount(1);
    await page.getByTestId("prompt-attachment-remove").click();
    await expect(page.getByTestId("prompt-attachment")).toHaveCount(0);

    // not an image type the API takes: refused with a message, nothing attached
    await pasteFiles(page, [{ name: "notes.txt", type: "text/plain", base64: btoa("hello") }]);
    await expect(page.getByTestId("prompt-error")).toContainText("only PNG, JPEG, GIF and WebP");
    await expect(page.getByTestId("prompt-attachment")).toHaveCount(0);

    await pasteFiles(page, [{ name: "shot.png", type: "image/png", base64: pngBase64 }]);
    // a file dropped on the box is attached too
    await page.getByTestId("prompt-input").evaluate((el, base64) => {
      const data = new DataTransfer();
      data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], "dropped.png", { type: "image/png" }));
      const box = el.closest("div.rounded-lg")!;
      box.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
      box.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
    }, pngBase64);
    await expect(page.getByTestId("prompt-attachment")).toHaveCount(2);
    await expect(page.locator('[data-testid="prompt-attachment"][data-name="dropped.png"]')).toHaveCount(1);
    await sendPrompt(page, "hello, what is in these?");
    await expect(page.getByTestId("prompt-attachment")).toHaveCount(0);
    const images = page.getByTestId("message-user").getByTestId("message-image");
    await expect(images).toHaveCount(2);
    const src = await images.first().locator("img").getAttribute("src");
    expect(src).toContain(`/api/workspaces/${ws.slug}/sessions/`);
    const served = await page.request.get(src!);
    expect(served.status()).toBe(200);
    expect(served.headers()["content-type"]).toBe("image/png");
    expect(Buffer.from(await served.body()).toString("base64")).toBe(pngBase64);
    // the turn ran (the scripted model's reply; the integration test checks it got the image blocks)
    await expect(page.getByTestId("message-assistant").first()).toBeVisible({ timeout: 30_000 });
  } finally {
    await page.context().close();
  }
});

test("the model picker switches the model once the CLI confirms; the context meter and the queue", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("mo"), `Mo ${stamp}`);
  try {
    await openSession(page, `Models ${stamp}`);
    await sendPrompt(page, "hello");
    await expect(page.getByTestId("turn-end")).toHaveCount(1, { timeout: 30_000 });

    // the context meter reads the CLI's figure after the turn
    const meter = page.getByTestId("context-meter");
    await expect(meter).toHaveAttribute("data-percent", /^\d+$/, { timeout: 15_000 });
    await meter.click();
    await expect(page.getByTestId("context-details")).toContainText("Messages");
    await meter.click();

    const picker = page.getByTestId("model-picker");
    await picker.click();
    const sonnet = page.locator('[data-testid="model-option"][data-model="sonnet"]');
    await expect(sonnet).toBeVisible();
    await sonnet.click();
    await expect(picker).toHaveAttribute("data-model", "sonnet", { timeout: 20_000 });
    await expect(page.getByTestId("model-pending")).toHaveCount(0);
    await expect(page.getByTestId("notice").filter({ hasText: "switched the model" })).toHaveCount(1);

    // a prompt typed while a turn streams is queued, and can be cancelled before it starts
    await sendPrompt(page, "slow please");
    await expect(page.locator('[data-testid="message-assistant"][data-streaming="true"]')).toHaveCount(1, { timeout: 15_000 });
    await sendPrompt(page, "hello from the queue");
    const queued = page.getByTestId("queued-prompt");
    // on a miss, the log's lifecycle lines say whether the CLI queued the prompt at all
    await expect(queued).toHaveCount(1).catch(async (err: unknown) => {
      const [, , slug, , id] = new URL(page.url()).pathname.split("/");
      const body = await (await page.request.get(`/api/workspaces/${slug}/sessions/${id}/events`)).text();
      console.log(body.split("\n").filter((l) => /command_lifecycle|"kind":"prompt"|"type":"result"|stream_event.*message_start/.test(l)).map((l) => l.slice(0, 260)).join("\n"));
      throw err;
    });
    await expect(queued).toContainText("hello from the queue");
    await queued.getByTestId("queued-prompt-cancel").click();
    await expect(queued).toHaveCount(0);
    await expect(page.getByTestId("notice").filter({ hasText: "cancelled a queued prompt" })).toHaveCount(1);
    await expect(page.getByTestId("turn-end")).toHaveCount(2, { timeout: 60_000 });
    // the cancelled prompt never ran: no third turn follows
    await page.waitForTimeout(1000);
    await expect(page.getByTestId("turn-end")).toHaveCount(2);
  } finally {
    await page.context().close();
  }
});

test("a prompt shows at Enter and becomes its logged row in place; a refused one comes back to the box", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("eve"), `Eve ${stamp}`);
  // The page's socket passes through here: prompts can be held (to see the echo before the
  // sidecar has it) or refused (answered here as the sidecar answers a refusal).
  let prompts: "pass" | "hold" | "refuse" = "pass";
  const held: string[] = [];
  let toServer: ((message: string) => void) | undefined;
  await page.routeWebSocket(/\/socket\.io\//, (ws) => {
    const server = ws.connectToServer();
    toServer = (message) => server.send(message);
    server.onMessage((message) => ws.send(message));
    ws.onMessage((message) => {
      const text = typeof message === "string" ? message : message.toString();
      const prompt = /^42(\d+)\["session:prompt"/.exec(text);
      if (prompt && prompts === "hold") held.push(text);
      else if (prompt && prompts === "refuse")
        ws.send(`43${prompt[1]}${JSON.stringify([{ ok: false, error: { code: "forbidden", message: "Refused on its way (test)." } }])}`);
      else server.send(message);
    });
  });
  try {
    await openSession(page, `Echo ${stamp}`);
    await sendPrompt(page, "hello");
    await expect(page.getByTestId("turn-end")).toHaveCount(1, { timeout: 30_000 });
    const input = page.getByTestId("prompt-input");
    const rows = page.getByTestId("message-user");

    // (the demo model picks its script by the prompt's words: greetings get a plain reply)
    // held on its way: the box is empty and the prompt shows as sending
    prompts = "hold";
    // the prompt leaves in the keydown's own task, before the page draws it: the sidecar's
    // receipt does not wait behind that render (what the page showed when it went is noted)
    await page.evaluate(() => {
      const send = WebSocket.prototype.send;
      const probe = window as unknown as { __promptSentWith?: string[] };
      probe.__promptSentWith = [];
      WebSocket.prototype.send = function (this: WebSocket, data) {
        if (typeof data === "string" && data.includes('"session:prompt"'))
          probe.__promptSentWith!.push(document.querySelector('[data-testid="message-user"][data-pending="true"]') ? "drawn" : "not drawn");
        return send.call(this, data);
      };
    });
    await input.fill("hello, held");
    await input.press("Enter");
    await expect(input).toHaveValue("");
    expect(await page.evaluate(() => (window as unknown as { __promptSentWith?: string[] }).__promptSentWith)).toEqual(["not drawn"]);
    const echo = rows.filter({ hasText: "hello, held" });
    await expect(echo).toHaveCount(1);
    await expect(echo).toHaveAttribute("data-pending", "true");
    await expect(echo).toContainText("sending…");
    await expect(echo.getByTestId("rewind-button")).toHaveCount(0);
    await expect.poll(() => held.length).toBe(1);
    // the element itself is marked: the logged prompt must be drawn in it, not beside it
    await echo.evaluate((el) => el.setAttribute("data-probe", "echo"));

    // let go: the logged prompt takes the echo's place (the same element), with its time and rewind
    prompts = "pass";
    toServer!(held.shift()!);
    await expect(echo).not.toHaveAttribute("data-pending", "true");
    await expect(echo).toHaveAttribute("data-probe", "echo");
    await expect(echo.getByTestId("rewind-button")).toHaveCount(1);
    await expect(echo).not.toContainText("sending…");
    await expect(rows.filter({ hasText: "hello, held" })).toHaveCount(1);
    await expect(page.getByTestId("turn-end")).toHaveCount(2, { timeout: 30_000 });

    // refused: the echo goes, the text comes back into the box with the reason
    prompts = "refuse";
    await input.fill("hello, refused");
    await input.press("Enter");
    await expect(page.getByTestId("prompt-error")).toContainText("Refused on its way (test).");
    await expect(input).toHaveValue("hello, refused");
    await expect(rows.filter({ hasText: "hello, refused" })).toHaveCount(0);

    // two prompts sent one right after the other both go, in the order they were sent
    prompts = "pass";
    await input.fill("hello, first");
    await input.press("Enter");
    await input.fill("hello, second");
    await input.press("Enter");
    await expect(input).toHaveValue("");
    await expect(page.locator('[data-testid="message-user"][data-pending="true"]')).toHaveCount(0, { timeout: 30_000 });
    const texts = await rows.allTextContents();
    const first = texts.findIndex((t) => t.includes("hello, first"));
    const second = texts.findIndex((t) => t.includes("hello, second"));
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first);
    expect(texts.filter((t) => /hello, (first|second)/.test(t))).toHaveLength(2);
  } finally {
    await page.context().close();
  }
});
