import type { Metadata } from "next";
import { Suspense } from "react";
import { LoginForm } from "@/components/auth/LoginForm";

export const metadata: Metadata = { title: "Sign in · gpudeck" };

export default function LoginPage() {
  return (
    <div className="mx-auto max-w-sm space-y-4 py-6">
      <h1 className="text-xl font-semibold">Sign in</h1>
      <Suspense fallback={null}>
        <LoginForm />
      </Suspense>
    </div>
  );
}
