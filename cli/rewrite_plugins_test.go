package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pluginNames maps a count-pass flag to its name in the build plugins (docs/build-plugins.md),
// where it is not the flag in camel case. "" marks a flag the plugins set themselves.
var pluginNames = map[string]string{
	"budget": "budgets", // a map in Gradle, a list in Maven: one --budget each
	"table":  "",        // each rewrite writes its own table beside its output
	"adapt":  "",        // the agent's alone: an offline rewrite refuses it
}

// Every option of the count pass (its flag group, countFlags) must be reachable from both build
// plugins and documented with them: a flag added to the pass fails this test until the plugins
// take it too.
func TestEveryCountPassOptionIsInTheBuildPlugins(t *testing.T) {
	read := func(p string) string {
		data, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	gradle := read("plugins/gradle/src/heapledger/gradle/HeapledgerExtension.java")
	maven := read("plugins/maven/src/main/java/heapledger/maven/AbstractHeapledgerMojo.java")
	docs := read("docs/build-plugins.md")
	for _, flag := range countFlagNames {
		name, special := pluginNames[flag]
		if !special {
			name = camel(flag)
		}
		if name == "" {
			continue
		}
		upper := strings.ToUpper(name[:1]) + name[1:]
		if !strings.Contains(gradle, "void set"+upper+"(") {
			t.Errorf("--%s: the Gradle DSL has no %s (HeapledgerExtension.set%s)", flag, name, upper)
		}
		if !strings.Contains(maven, " "+name+";") {
			t.Errorf("--%s: the Maven plugin has no parameter %s", flag, name)
		}
		if !strings.Contains(docs, "`"+name+"`") || !strings.Contains(docs, "`--"+flag) {
			t.Errorf("--%s: docs/build-plugins.md does not list %s with its flag", flag, name)
		}
	}
}

// staleWords mark a sentence that says an option is still to come: "no --x flag yet", "wait on
// their passes", "reserved for".
var staleWords = regexp.MustCompile(`(?i)\b(yet|wait|waits|waiting|reserved|not implemented|to come)\b`)

// The build plugins' document must not call an option of the count pass missing or still to
// come: every flag TestEveryCountPassOptionIsInTheBuildPlugins iterates over exists, and both
// plugins pass it.
func TestBuildPluginsDocHasNoStaleOption(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "build-plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Sentences end at a full stop before a space, a blank line or a table row's start.
	for _, sentence := range regexp.MustCompile(`\.\s|\n\s*\n|\n\|`).Split(string(data), -1) {
		if !staleWords.MatchString(sentence) {
			continue
		}
		for _, flag := range countFlagNames {
			name, special := pluginNames[flag]
			if !special {
				name = camel(flag)
			}
			if strings.Contains(sentence, "`--"+flag+"`") || name != "" && strings.Contains(sentence, "`"+name+"`") {
				t.Errorf("docs/build-plugins.md calls --%s missing or still to come, yet it exists:\n%s", flag, strings.TrimSpace(sentence))
			}
		}
	}
}

// camel turns "accounts-file" into "accountsFile".
func camel(flag string) string {
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}
