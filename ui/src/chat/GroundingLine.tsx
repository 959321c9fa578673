// The status line under an answer: how many of its numbers have a source in the data.
import { useContext } from "react";
import type { Grounding } from "../bindings";
import { LanguageContext } from "../i18n";
import { groundingStatus } from "./grounding";

export default function GroundingLine({ grounding }: { grounding: Grounding | null | undefined }) {
  const lang = useContext(LanguageContext);
  if (!grounding || grounding.claims.length === 0) return null;
  return (
    <div className={`hint grounding-line${grounding.unsupported > 0 ? " grounding-gaps" : ""}`} data-sourced={grounding.sourced} data-unsupported={grounding.unsupported}>
      {groundingStatus(grounding, lang)}
    </div>
  );
}
