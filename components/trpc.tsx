"use client";
/** Browser side of tRPC: queries/mutations batched over HTTP, subscriptions over SSE. */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import type { PanelRouter } from "@/server/panel/router";
import { wireTransformer } from "@/server/contract/wire";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<PanelRouter>();

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: false } },
      }),
  );
  const [trpcClient] = useState(() =>
    createTRPCClient<PanelRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ url: "/api/trpc", transformer: wireTransformer }),
          // at most 10 calls a request: well under the panel's GPUDECK_BATCH_MAX (20)
          false: httpBatchLink({ url: "/api/trpc", transformer: wireTransformer, maxItems: 10 }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
