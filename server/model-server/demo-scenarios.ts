// The offline demo's model: scenarios picked by words in the prompt, each showing one part of
// Conduit (approvals with diffs, questions, plans, slow streams, API errors). They work in any
// workspace: every file they touch is one they create or check first. No node:* imports, so the
// UI can import the list below for its help text.
import {
  callTool,
  callTools,
  fail,
  say,
  type ReplyStep,
  type Scenario,
  type StepContext,
  type ToolResultSeen,
} from "./scenario";

/** What the UI shows about a demo scenario. */
export interface DemoScenarioInfo {
  name: string;
  triggers: readonly string[];
  description: string;
}

/** The file the default tour reads, creates when missing, and edits. */
export const demoTourFile = "conduit-demo.md";
export const demoWriteFile = "conduit-hello.md";
/** The tour's shell command. */
export const demoTourCommand = `touch ${demoTourFile} && ls -la`;
/** The demo-background scenario's command: harmless, and long enough to stop it by hand. */
export const demoBackgroundCommand = "sleep 60";
/** Where the demo subagent notes its survey (a shell write: the CLI asks, and the card names the subagent). */
export const demoSurveyFile = "demo-survey.txt";

const tourFileContent = [
  "# Conduit demo",
  "",
  "This file was created by Conduit's offline demo model.",
  "Every change to it went through an approval with a diff.",
  "",
  "Status: draft",
  "",
].join("\n");

const statusCycle = ["draft", "reviewed", "approved"] as const;

// Read results come back as `<spaces><line number><tab><text>` lines; the Edit needs the raw text.
function fileTextFromRead(result: ToolResultSeen): string {
  return result.text
    .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "")
    .split("\n")
    .map((line) => line.replace(/^\s*\d+[\t→]/, ""))
    .join("\n");
}

function countOccurrences(haystack: string, needle: string): number {
  return needle === "" ? 0 : haystack.split(needle).length - 1;
}

/** The Edit the tour proposes for the file as it currently reads, or undefined when no safe edit exists. */
export function planTourEdit(fileText: string): { old_string: string; new_string: string } | undefined {
  const status = /^Status: (\S+)$/m.exec(fileText);
  if (status?.[1] !== undefined && countOccurrences(fileText, status[0]) === 1) {
    const index = statusCycle.indexOf(status[1] as (typeof statusCycle)[number]);
    const next = statusCycle[(index + 1) % statusCycle.length] ?? "reviewed";
    return { old_string: status[0], new_string: `Status: ${next}` };
  }
  // A file someone else wrote: append after its last line, if that line is unique (Edit needs a unique match).
  const lastLine = fileText
    .split("\n")
    .filter((line) => line.trim() !== "")
    .at(-1);
  if (lastLine !== undefined && countOccurrences(fileText, lastLine) === 1) {
    return { old_string: lastLine, new_string: `${lastLine}\n\nStatus: reviewed` };
  }
  return undefined;
}

function resultOf(ctx: StepContext, toolUseId: string): ToolResultSeen | undefined {
  return ctx.toolResultsSincePrompt.find((result) => result.toolUseId === toolUseId);
}

/**
 * The default tour: Read the demo file (Write it first when missing), propose an Edit, run a
 * harmless Bash command, summarise. Each call decides from what happened so far in the turn, so a
 * denied approval or a failed tool changes the course instead of derailing it.
 */
function tourStep(ctx: StepContext): ReplyStep | undefined {
  const uses = ctx.toolUsesSincePrompt;
  const find = (name: string) => uses.find((use) => use.name === name);
  const read = find("Read");
  const write = find("Write");
  const edit = find("Edit");
  const bash = find("Bash");

  if (read === undefined) {
    return callTool(
      "Read",
      { file_path: demoTourFile },
      { text: `Let me take a quick tour. First I'll read \`${demoTourFile}\`.` },
    );
  }
  const readResult = resultOf(ctx, read.id);
  const fileMissing = readResult === undefined || readResult.isError;
  if (fileMissing && write === undefined) {
    return callTool(
      "Write",
      { file_path: demoTourFile, content: tourFileContent },
      { text: `\`${demoTourFile}\` doesn't exist yet, so I'll create it. You'll see the new file for approval.` },
    );
  }
  if (edit === undefined && bash === undefined) {
    // After our own Write the file holds our content (unless the approver changed it: then the Edit
    // fails validation and the tour goes on).
    const written = write !== undefined && resultOf(ctx, write.id)?.isError === false;
    const current = written
      ? tourFileContent
      : readResult !== undefined && !readResult.isError
        ? fileTextFromRead(readResult)
        : undefined;
    const change = current !== undefined ? planTourEdit(current) : undefined;
    if (change !== undefined) {
      return callTool(
        "Edit",
        { file_path: demoTourFile, ...change },
        { text: "Now a small edit. The approval shows the diff, and you can change the proposal before allowing it." },
      );
    }
  }
  if (bash === undefined) {
    // `ls` alone is read-only and runs without asking; the touch makes the CLI ask, so the demo shows a Bash approval.
    return callTool(
      "Bash",
      { command: demoTourCommand, description: "Touch the demo file and list the workspace" },
      { text: "Finally, a harmless shell command: touch the demo file and list the workspace." },
    );
  }
  // The summary was the last answer: any further call gets the scenario's final text.
  if (ctx.lastToolResults.length === 0) return undefined;
  return say(tourSummary(ctx, { write, edit, bash }));
}

function tourSummary(
  ctx: StepContext,
  uses: { write?: { id: string }; edit?: { id: string }; bash?: { id: string } },
): string {
  const outcome = (use: { id: string } | undefined) => (use === undefined ? undefined : resultOf(ctx, use.id));
  const lines = ["Here's what happened:"];
  const write = outcome(uses.write);
  if (uses.write !== undefined) {
    lines.push(write?.isError ? `- Creating \`${demoTourFile}\` was not allowed.` : `- Created \`${demoTourFile}\`.`);
  } else {
    lines.push(`- Read \`${demoTourFile}\`.`);
  }
  const edit = outcome(uses.edit);
  if (uses.edit === undefined) lines.push("- Skipped the edit: there was no line I could change safely.");
  else
    lines.push(
      edit?.isError ? "- The edit was declined or failed, so the file is unchanged." : "- Edited its status line.",
    );
  const bash = outcome(uses.bash);
  lines.push(bash?.isError ? `- \`${demoTourCommand}\` was declined or failed.` : `- Ran \`${demoTourCommand}\`.`);
  lines.push(
    "",
    "Try prompts with the words write, question, plan, todo, agent, background, slow or error to see more.",
  );
  return lines.join("\n");
}

const slowText =
  "This answer streams slowly on purpose, a few words at a time, so you can watch the output arrive " +
  "and try the interrupt button while it is still running. Conduit keeps every streamed event in the " +
  "session log, so a browser that reloads in the middle of this paragraph catches up from the last event " +
  "it saw and continues from there, without gaps and without duplicates. If nobody interrupts, the " +
  "stream simply finishes with this sentence.";

function answerSummary(ctx: StepContext): string {
  const answer = ctx.lastToolResults[0];
  if (answer === undefined) return "I didn't get an answer.";
  return answer.isError ? `No answer was given (${answer.text}).` : `Thanks! ${answer.text}`;
}

const helpText = (): string =>
  [
    "Hi! I'm Conduit's offline demo model: no API key needed, every answer is scripted.",
    "Words in your prompt pick what I do:",
    ...demoScenarioList.map(
      (info) => `- ${info.triggers.length > 0 ? info.triggers.join(", ") : "anything else"}: ${info.description}`,
    ),
  ].join("\n");

/** The Markdown scenario's reply: what assistant text can show. */
const markdownText = [
  "Here is what a reply can show.",
  "",
  "| Feature | Where | Ready |",
  "|:--------|:------|------:|",
  "| Tables | GFM | yes |",
  "| Task lists | GFM | yes |",
  "| ~~Raw HTML~~ | shown as text | never rendered |",
  "",
  "Next steps:",
  "",
  "- [x] Render the table",
  "- [x] Tick finished tasks",
  "- [ ] Highlight the code",
  "",
  "```ts",
  "export function total(costs: number[]): number {",
  "  return costs.reduce((sum, c) => sum + c, 0); // in USD",
  "}",
  "```",
  "",
  "Read more at https://github.github.com/gfm/.",
].join("\n");

/** The demo-todo checklist with the first two items' statuses. */
function demoTodos(first: string, second: string): Record<string, string>[] {
  return [
    { content: "Read the project's README", status: first, activeForm: "Reading the project's README" },
    { content: "Write the release notes", status: second, activeForm: "Writing the release notes" },
    { content: "Ask for a review", status: "pending", activeForm: "Asking for a review" },
  ];
}

/**
 * The demo-agent turn: an Agent call (the CLI runs the subagent in the background and answers at
 * once), a note that it works, and, when the CLI later delivers the subagent's notification (in a
 * turn of its own, after the same prompt), its report.
 */
function agentStep(ctx: StepContext): ReplyStep | undefined {
  const notification = taskNotification(ctx);
  if (notification) return say(`The subagent reported back: ${notification.result ?? "it finished without a report."}`);
  if (ctx.stepIndex === 0) {
    return callTool(
      "Agent",
      {
        description: "Survey the demo file",
        subagent_type: "general-purpose",
        prompt: `[scenario:demo-subagent] Read ${demoTourFile} if it exists, note what you found in ${demoSurveyFile}, and report.`,
      },
      { text: "I'll hand this to a subagent; its steps appear under its card." },
    );
  }
  if (ctx.stepIndex === 1) return say("The subagent is working in the background; its report follows when it is done.");
  return undefined;
}

/** A background task's notification in the request's last message (the CLI's own turn), if that is one. */
function taskNotification(ctx: StepContext): { status: string; result: string | undefined } | undefined {
  const last = ctx.request.messages.at(-1);
  if (last?.role !== "user") return undefined;
  const text =
    typeof last.content === "string"
      ? last.content
      : last.content.map((block) => (block.type === "text" ? String(block.text ?? "") : "")).join("\n");
  if (!text.includes("<task-notification>")) return undefined;
  const tag = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text)?.[1]?.trim();
  return { status: tag("status") ?? "ended", result: tag("result") };
}

/**
 * The demo-background turn: a shell command run in the background (listed above the prompt box
 * with Stop), and, when the CLI reports that it ended, a word about it.
 */
function backgroundStep(ctx: StepContext): ReplyStep | undefined {
  const notification = taskNotification(ctx);
  if (notification) return say(`The background command ended (${notification.status}).`);
  if (ctx.stepIndex === 0) {
    return callTool(
      "Bash",
      { command: demoBackgroundCommand, description: "Wait a minute in the background", run_in_background: true },
      { text: "I'll start a command that runs in the background." },
    );
  }
  if (ctx.stepIndex === 1) {
    return say("It runs in the background: the list above the prompt box shows it, with Stop.");
  }
  return undefined;
}

/** The demo subagent's finding about the demo file, from its Read's result (the first tool result of its turn). */
function surveyOf(ctx: StepContext): string {
  const read = ctx.toolResultsSincePrompt[0];
  if (read === undefined || read.isError) return `\`${demoTourFile}\` does not exist yet (try "tour" to create it).`;
  return `\`${demoTourFile}\` has ${fileTextFromRead(read).split("\n").length} lines.`;
}

/** The shell command that writes the survey (plain words only: the finding's backquotes and quotes dropped). */
function subagentNoteCommand(survey: string): string {
  return `echo '${survey.replace(/[^\w .()-]/g, "")}' > ${demoSurveyFile}`;
}

/** The demo set, in trigger priority order (the first scenario with a matching word wins). */
export const demoScenarios: readonly Scenario[] = [
  {
    name: "demo-error",
    triggers: ["error", "fail", "failure", "overloaded"],
    description: "The API answers 529 Overloaded once; the CLI retries and the answer arrives.",
    steps: [
      fail("overloaded"),
      say("The API was overloaded for a moment. The CLI retried on its own, and here is the answer."),
    ],
  },
  {
    name: "demo-slow",
    triggers: ["slow", "stream", "long", "interrupt"],
    description: "A long answer streamed slowly, to watch streaming or try interrupting.",
    steps: [say(slowText, { chunkDelayMs: 200 })],
  },
  {
    name: "demo-question",
    triggers: ["question", "ask", "choose", "choice"],
    description: "Asks you a multiple-choice question (AskUserQuestion) and replies with your answer.",
    steps: [
      callTool(
        "AskUserQuestion",
        {
          questions: [
            {
              question: "Which colour should the demo banner use?",
              header: "Colour",
              multiSelect: false,
              options: [
                { label: "Blue", description: "Calm and classic" },
                { label: "Green", description: "Fresh and friendly" },
                { label: "Orange", description: "Bright and bold" },
              ],
            },
          ],
        },
        { text: "I need a decision from you first." },
      ),
      (ctx) => say(answerSummary(ctx)),
    ],
  },
  {
    name: "demo-plan",
    triggers: ["plan", "planning", "design"],
    description: "Switches to plan mode and presents a plan for approval (ExitPlanMode); allowing it leaves plan mode.",
    steps: [
      // ExitPlanMode outside plan mode fails without a prompt; EnterPlanMode runs without one, in any mode.
      callTool("EnterPlanMode", {}, { text: "Let me switch to plan mode and think this through." }),
      callTool(
        "ExitPlanMode",
        {
          plan: [
            "# Plan: tidy the demo workspace",
            "",
            `1. Create \`${demoWriteFile}\` with a short greeting.`,
            `2. Add a status line to \`${demoTourFile}\`.`,
            "3. List the workspace to check the result.",
          ].join("\n"),
        },
        { text: "Here is my plan. Approve it to let me start, or deny it with a note to keep planning." },
      ),
      (ctx) =>
        say(
          ctx.lastToolResults[0]?.isError
            ? `Understood, I'll keep planning. Your note: ${ctx.lastToolResults[0].text}`
            : 'The plan is approved. Send another prompt (for example "write") to carry out a step.',
        ),
    ],
  },
  {
    name: "demo-write",
    triggers: ["write", "create"],
    description: `Writes a new file (${demoWriteFile}), shown as a diff for approval.`,
    steps: [
      callTools(
        [
          {
            name: "Write",
            input: {
              file_path: demoWriteFile,
              content:
                "# Hello from Conduit\n\nThis file was written by the offline demo model after you approved it.\n",
            },
          },
        ],
        { text: `I'll create \`${demoWriteFile}\`. The approval shows the whole new file.` },
      ),
      (ctx) =>
        say(
          ctx.lastToolResults[0]?.isError
            ? `The file was not written: ${ctx.lastToolResults[0].text}`
            : `Done: \`${demoWriteFile}\` now exists in the workspace.`,
        ),
    ],
  },
  {
    name: "demo-markdown",
    triggers: ["markdown", "table", "checklist"],
    description: "A reply in Markdown: a table, a task list and a highlighted code block, no tools.",
    steps: [say(markdownText)],
  },
  {
    name: "demo-todo",
    triggers: ["todo", "todos", "tasks"],
    description:
      "Plans with TodoWrite (a live checklist pinned above the prompt box), then ticks an item off. " +
      "This CLI build has no TodoWrite tool, so its calls come back as errors; the checklist still shows the plan.",
    steps: [
      callTool("TodoWrite", { todos: demoTodos("in_progress", "pending") }, { text: "Here is my plan." }),
      callTool("TodoWrite", { todos: demoTodos("completed", "in_progress") }, { text: "The first step is done." }),
      say("The checklist above the prompt box shows where I am."),
    ],
  },
  {
    name: "demo-background",
    triggers: ["background", "sleep"],
    description: `Runs a shell command (${demoBackgroundCommand}) in the background, listed above the prompt box with Stop.`,
    steps: backgroundStep,
  },
  {
    name: "demo-agent",
    triggers: ["agent", "agents", "subagent", "subagents", "delegate"],
    description:
      "Hands a task to a subagent (the Agent tool): its steps stream nested under the call while it works in the background, and its report arrives in a turn of its own.",
    steps: agentStep,
  },
  {
    name: "demo-subagent",
    description:
      "The subagent of demo-agent: reads the demo file, asks to note what it found (an approval that names the subagent), and reports (selected by its tag only).",
    steps: [
      callTool("Read", { file_path: demoTourFile }, { text: `Reading \`${demoTourFile}\`.` }),
      (ctx) =>
        callTool(
          "Bash",
          { command: subagentNoteCommand(surveyOf(ctx)), description: `Note the survey in ${demoSurveyFile}` },
          { text: `Noting that in \`${demoSurveyFile}\`.` },
        ),
      (ctx) => {
        const noted = ctx.lastToolResults[0]?.isError === false;
        return say(`${surveyOf(ctx)}${noted ? ` Noted in \`${demoSurveyFile}\`.` : " The note was not allowed."}`);
      },
    ],
  },
  {
    name: "demo-chat",
    triggers: ["hello", "hi", "hey", "thanks", "thank", "help", "chat"],
    description: "A plain text reply, no tools; lists what the demo can do.",
    steps: [(ctx: StepContext) => say(ctx.stepIndex === 0 ? helpText() : "Done.")],
  },
  {
    name: "demo-tour",
    triggers: ["tour", "demo", "edit"],
    description:
      `The default: reads ${demoTourFile} (creating it if missing), proposes an Edit with a diff, ` +
      "runs a harmless shell command, summarises.",
    steps: tourStep,
  },
];

/** Answers prompts that match no trigger. */
export const defaultDemoScenario = "demo-tour";

/** Name, trigger words and description of each demo scenario a prompt can pick by a word, for the UI's help. */
export const demoScenarioList: readonly DemoScenarioInfo[] = demoScenarios
  .filter((scenario) => (scenario.triggers ?? []).length > 0)
  .map((scenario) => ({
    name: scenario.name,
    triggers: scenario.triggers ?? [],
    description: scenario.description ?? "",
  }));
