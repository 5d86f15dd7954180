package passes

import "testing"

// TestPlainParams: a call to String, StringBuilder or Character counts as account-neutral
// (neutral.go, rule 3) only when nothing it takes could run code of the program.
func TestPlainParams(t *testing.T) {
	for _, c := range []struct {
		owner, desc string
		want        bool
	}{
		{"java/lang/String", "()I", true},
		{"java/lang/String", "(Ljava/lang/String;)Z", true},
		{"java/lang/String", "(II)Ljava/lang/String;", true},
		{"java/lang/String", "([CII)V", true},
		{"java/lang/StringBuilder", "(Ljava/lang/String;)Ljava/lang/StringBuilder;", true},
		{"java/lang/StringBuilder", "(J)Ljava/lang/StringBuilder;", true},
		{"java/lang/Character", "([CII)I", true},
		{"java/lang/StringBuilder", "(Ljava/lang/Object;)Ljava/lang/StringBuilder;", false},
		{"java/lang/StringBuilder", "(Ljava/lang/CharSequence;)Ljava/lang/StringBuilder;", false},
		{"java/lang/String", "(Ljava/lang/Object;)Z", false},
		{"java/lang/String", "(Ljava/lang/String;[Ljava/lang/Object;)Ljava/lang/String;", false},
		{"java/lang/String", "([[C)V", false},
		{"java/lang/String", "([BLjava/lang/String;)V", false}, // a charset by name
		{"java/lang/String", "(Ljava/lang/String;)[B", false},  // getBytes(charsetName)
		{"java/lang/String", "bad", false},
	} {
		if got := plainParams(c.owner, c.desc); got != c.want {
			t.Errorf("plainParams(%s, %s) = %v, want %v", c.owner, c.desc, got, c.want)
		}
	}
}

// TestJDKClass: the classes the application class loader takes from the JDK, whatever the
// class path holds, are the JDK's to the pass; xml-apis' org.w3c.dom is, its SVG DOM is not.
func TestJDKClass(t *testing.T) {
	for name, want := range map[string]bool{
		"java/lang/String":                   true,
		"javax/xml/parsers/DocumentBuilder":  true,
		"com/sun/tools/javac/Main":           true,
		"org/w3c/dom/Node":                   true,
		"org/w3c/dom/css/CSSRule":            true,
		"org/xml/sax/helpers/DefaultHandler": true,
		"org/ietf/jgss/GSSManager":           true,
		"netscape/javascript/JSObject":       true,
		"org/omg/CORBA/ORB":                  true,
		"org/w3c/dom/svg/SVGDocument":        false,
		"org/w3c/Thing":                      false,
		"org/xml/Other":                      false,
		"org/apache/xerces/dom/NodeImpl":     false,
		"Main":                               false,
	} {
		if got := jdkClass(name); got != want {
			t.Errorf("jdkClass(%s) = %v, want %v", name, got, want)
		}
	}
}
