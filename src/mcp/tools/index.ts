// Every tool the server offers. A new operation adds its entry here, next to the others of its noun.
import type { ToolDef } from "../tool.ts";
import { AGENT_TOOLS } from "./agents.ts";
import { CLAIM_TOOLS } from "./claims.ts";
import { DEPENDENCY_TOOLS } from "./dependencies.ts";
import { HANDOFF_TOOLS } from "./handoffs.ts";
import { INSIGHT_TOOLS } from "./insights.ts";
import { LEASE_TOOLS } from "./leases.ts";
import { MEMORY_TOOLS } from "./memories.ts";
import { REVIEW_TOOLS } from "./review.ts";
import { TASK_TOOLS } from "./tasks.ts";
import { VIEW_TOOLS } from "./views.ts";
import { WAIT_TOOLS } from "./waiting.ts";
import { requestReleaseTool } from "./request-release.ts";
import { answerRequestTool } from "./answer-request.ts";

export const ALL_TOOLS: readonly ToolDef[] = [...VIEW_TOOLS, ...TASK_TOOLS, ...CLAIM_TOOLS, ...REVIEW_TOOLS, ...DEPENDENCY_TOOLS, ...WAIT_TOOLS, ...LEASE_TOOLS, ...HANDOFF_TOOLS, requestReleaseTool, answerRequestTool, ...AGENT_TOOLS, ...INSIGHT_TOOLS, ...MEMORY_TOOLS];
