"use client";
/**
 * The unit list's filters, kept in the URL (see components/urlState.ts). The text box echoes
 * typing at once and the URL follows; a URL change (back, a link) wins. Text typed before the
 * page became interactive (a slow phone) is picked up on mount, never lost.
 */
import { usePathname, useSearchParams } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { replaceSearch } from "@/components/urlState";
import { parseUnitFilter, withFilter, type UnitFilter } from "./unitFilter";

export function useUnitFilter() {
  const params = useSearchParams();
  const pathname = usePathname();
  const filter = parseUnitFilter(params);
  const [q, setQ] = useState(filter.q);
  const [seenUrlQ, setSeenUrlQ] = useState(filter.q);
  if (seenUrlQ !== filter.q) {
    setSeenUrlQ(filter.q);
    setQ(filter.q);
  }

  const setParam = (key: keyof UnitFilter, value: string) => replaceSearch(pathname, withFilter(params, key, value));
  const setText = (value: string) => {
    setQ(value);
    setParam("q", value);
  };

  const searchRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const typed = searchRef.current?.value ?? "";
    if (typed !== filter.q) setText(typed);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once, on mount
  }, []);

  /** the filter as shown: the text box's own text, the rest from the URL */
  const shown: UnitFilter = { ...filter, q };
  return { filter: shown, setText, setParam, searchRef };
}
