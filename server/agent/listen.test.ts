import { describe, expect, it } from "vitest";
import { isLoopbackListen, plainHttpRefusal } from "./listen";

describe("the agent's plain HTTP rule", () => {
  it("serves plain HTTP on loopback", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) {
      expect(isLoopbackListen(host), host).toBe(true);
      expect(plainHttpRefusal({ host, port: 9300 }), host).toBeNull();
    }
  });

  it("refuses plain HTTP off loopback, saying https or GPUDECK_AGENT_INSECURE_HTTP", () => {
    for (const host of ["0.0.0.0", "10.0.0.5", "::", "192.168.1.2", "127.evil.example"]) {
      const refusal = plainHttpRefusal({ host, port: 9300 });
      expect(refusal, host).toContain(`plain HTTP on ${host}:9300, off loopback`);
      expect(refusal).toContain("GPUDECK_AGENT_TLS_CERT/KEY");
      expect(refusal).toContain("GPUDECK_AGENT_INSECURE_HTTP=1");
      expect(refusal).toContain("insecure_http = true");
    }
  });

  it("allows it off loopback with TLS, or when the owner says so", () => {
    expect(plainHttpRefusal({ host: "0.0.0.0", port: 9300, tls: { certFile: "c", keyFile: "k" } })).toBeNull();
    expect(plainHttpRefusal({ host: "0.0.0.0", port: 9300, insecureHttp: true })).toBeNull();
  });
});
