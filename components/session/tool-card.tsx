// The tool cards live in ./tools (one renderer per tool family); this path stays for importers.
export { ToolCard, toolFamily, toolSummary, type ToolCardProps } from "./tools/tool-card";
