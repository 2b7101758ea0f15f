import { describe, expect, it } from "vitest";
import { buildAnswers, readQuestions, type QuestionChoice } from "./question-answers";

const input = {
  questions: [
    {
      question: "Which database?",
      header: "DB",
      multiSelect: false,
      options: [{ label: "SQLite", description: "a file" }, { label: "PostgreSQL" }],
    },
    {
      question: "Which checks?",
      header: "CI",
      multiSelect: true,
      options: [{ label: "lint" }, { label: "types" }, { label: "tests" }],
    },
    { header: "broken" },
  ],
};

describe("readQuestions", () => {
  it("reads the questions and skips malformed ones", () => {
    const qs = readQuestions(input);
    expect(qs.map((q) => q.question)).toEqual(["Which database?", "Which checks?"]);
    expect(qs[0]!.options[0]).toEqual({ label: "SQLite", description: "a file" });
    expect(qs[1]!.multiSelect).toBe(true);
  });
});

describe("buildAnswers", () => {
  const qs = readQuestions(input);
  const choice = (c: Partial<QuestionChoice>): QuestionChoice => ({ selected: [], otherOn: false, other: "", ...c });

  it("maps each question to its label, multi-select joined in option order", () => {
    const choices = new Map([
      ["Which database?", choice({ selected: ["PostgreSQL"] })],
      ["Which checks?", choice({ selected: ["tests", "lint"] })],
    ]);
    expect(buildAnswers(qs, choices)).toEqual({
      answers: { "Which database?": "PostgreSQL", "Which checks?": "lint, tests" },
      unanswered: [],
    });
  });

  it("uses the Other text, alone for a single choice and appended for a multi-select", () => {
    const choices = new Map([
      ["Which database?", choice({ selected: ["SQLite"], otherOn: true, other: " DuckDB " })],
      ["Which checks?", choice({ selected: ["types"], otherOn: true, other: "e2e" })],
    ]);
    expect(buildAnswers(qs, choices).answers).toEqual({ "Which database?": "DuckDB", "Which checks?": "types, e2e" });
  });

  it("lists the unanswered questions", () => {
    const choices = new Map([["Which checks?", choice({ otherOn: true, other: "  " })]]);
    expect(buildAnswers(qs, choices).unanswered).toEqual(["Which database?", "Which checks?"]);
  });
});
