// Display names of the agent's tools, as the runtime sends them in `tool_start` (the
// `ToolSpec` display names in the Rust tool registry). Stored conversations keep only the
// tool's name, so reopened tool cards look names up here to read like live ones; a live
// event's own display name always wins.

export const TOOL_DISPLAY_NAMES: Readonly<Record<string, string>> = {
  search_stock_by_name: "搜索股票",
  analyze_stock: "个股分析",
  portfolio: "持仓",
  get_market_overview: "大盘水温",
  get_market_history: "大盘回看",
  get_market_map: "市场情绪",
  size_position: "仓位计算",
  update_portfolio: "调仓操作",
  record_fill: "记录成交",
  annotate_chart: "图表标注",
  query_history: "历史查询",
  check_background_tasks: "任务状态",
  screen_stocks: "全市场扫描",
  run_backtest: "策略回测",
  generate_ai_report: "AI 研报",
  generate_strategy_decision: "攻防决策",
  delegate_to_research: "研究 agent",
  delegate_to_analysis: "分析 agent",
  delegate_to_trading: "交易 agent",
  exec_command: "执行命令",
  read_file: "读取文件",
  write_file: "写入文件",
  web_fetch: "网页抓取",
  sync_market: "全市场同步",
  import_bars: "导入行情 CSV",
};

const TOOL_NAMES_EN: Readonly<Record<string, string>> = {
  search_stock_by_name: "Stock search",
  analyze_stock: "Stock analysis",
  portfolio: "Portfolio",
  get_market_overview: "Market regime",
  get_market_history: "Market history",
  get_market_map: "Market mood",
  size_position: "Position size",
  update_portfolio: "Portfolio change",
  record_fill: "Record a fill",
  annotate_chart: "Chart note",
  query_history: "History query",
  check_background_tasks: "Task status",
  screen_stocks: "Market screen",
  run_backtest: "Backtest",
  generate_ai_report: "AI report",
  generate_strategy_decision: "Strategy decision",
  delegate_to_research: "Research agent",
  delegate_to_analysis: "Analysis agent",
  delegate_to_trading: "Trading agent",
  exec_command: "Run command",
  read_file: "Read file",
  write_file: "Write file",
  web_fetch: "Fetch web page",
  sync_market: "Full-market sync",
  import_bars: "CSV import",
};

/** The name a tool card or task shows: the runtime's (Chinese) display name, or the English
 * one when the app is in English and the tool is known. */
export function toolLabel(name: string, displayName: string, lang: string): string {
  return lang === "en" && Object.hasOwn(TOOL_NAMES_EN, name) ? TOOL_NAMES_EN[name] : displayName;
}

/** "MCP · server · tool" for an MCP server's tool (`mcp__<server>__<tool>`), as the runtime
 * names it live, so a reopened conversation's card reads the same; null for other names.
 * Split at the first "__" after the server name's first character: a server named with "__"
 * inside (allowed, rare) reads differently than live, never as a bare identifier. */
export function mcpDisplayName(name: string): string | null {
  if (!name.startsWith("mcp__")) return null;
  const rest = name.slice("mcp__".length);
  const cut = rest.indexOf("__", 1);
  if (cut < 1 || cut + 2 >= rest.length) return null;
  return `MCP · ${rest.slice(0, cut)} · ${rest.slice(cut + 2)}`;
}

/** The display name of a tool, or its name when it is not a known one. */
export function toolDisplayName(name: string): string {
  if (Object.hasOwn(TOOL_DISPLAY_NAMES, name)) return TOOL_DISPLAY_NAMES[name];
  return mcpDisplayName(name) ?? name;
}

/** The error text of a failed call's stored result, as the live `tool_error` event carries
 * it: the `error` field of `{"error": …, "code": …}`, or the content itself. */
export function toolErrorText(content: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return content;
  }
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "error" in parsed) {
    const error = (parsed as { error: unknown }).error;
    return typeof error === "string" ? error : JSON.stringify(error);
  }
  return content;
}
