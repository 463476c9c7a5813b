import Testing

// The examples themselves are compiled into this target from README.md by the ReadmeExamples
// plugin: if one stops compiling, the test build fails.
@Test("README.md's Swift examples are compiled into this target")
func readmeExamplesCompile() {
    #expect(readmeExampleCount >= 3)
}

@Test("README.md's Var example runs")
func varExampleRuns() async throws {
    try await readmeExample1()
}
