package main

// Input generators. Every generator is a pure function of its size parameter and a fixed seed, so
// the same command produces byte-identical inputs on every machine, and an output that differs
// between modes can only come from the mode.

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

// genRand is the one source of pseudo-random choices; seeding it per generator keeps each input
// independent of which other workloads were generated first.
func genRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

var words = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima
mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu
amber basalt cobalt dune ember fjord garnet harbor iris jade kestrel lagoon marble nectar onyx
pebble quartz raven saffron tundra umber violet willow yarrow zephyr anchor beacon canyon
drift estuary falcon glacier heron island jetty kelp lantern meadow north orchard prairie
quarry ridge summit thicket upland valley wharf`)

func pick(r *rand.Rand, s []string) string { return s[r.Intn(len(s))] }

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pick(r, words))
	}
	return b.String()
}

func writeFile(path string, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(data), 0o644)
}

// genCatalogue writes a product catalogue and a stylesheet that exercises xsl:key lookups,
// Muenchian grouping, multi-key sorting, and numeric aggregation — the parts of XSLT that
// allocate most in Xalan (node sets, key tables, sort keys).
func genCatalogue(dir string, items int) error {
	r := genRand(6001)
	cats := []string{"tools", "garden", "kitchen", "books", "music", "toys", "sport", "office",
		"travel", "health", "pets", "auto", "music-sheet", "lighting", "storage", "textiles"}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<catalogue>\n")
	suppliers := 60
	for s := 0; s < suppliers; s++ {
		fmt.Fprintf(&b, "  <supplier id=\"s%d\" country=\"%s\"><name>%s %s Ltd</name></supplier>\n",
			s, pick(r, []string{"AT", "DE", "FR", "IT", "NL", "SE", "PL", "ES"}), pick(r, words), pick(r, words))
	}
	for i := 0; i < items; i++ {
		fmt.Fprintf(&b, "  <item sku=\"K%06d\" category=\"%s\" supplier=\"s%d\">\n", i, pick(r, cats), r.Intn(suppliers))
		fmt.Fprintf(&b, "    <title>%s</title>\n    <price>%d.%02d</price>\n    <stock>%d</stock>\n",
			sentence(r, 3+r.Intn(4)), 1+r.Intn(900), r.Intn(100), r.Intn(500))
		b.WriteString("    <tags>")
		for t := 0; t < 1+r.Intn(4); t++ {
			fmt.Fprintf(&b, "<tag>%s</tag>", pick(r, words))
		}
		b.WriteString("</tags>\n  </item>\n")
	}
	b.WriteString("</catalogue>\n")
	if err := writeFile(filepath.Join(dir, "catalogue.xml"), b.String()); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "report.xsl"), catalogueXSL)
}

const catalogueXSL = `<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="xml" indent="yes" encoding="UTF-8"/>
  <xsl:key name="by-category" match="item" use="@category"/>
  <xsl:key name="by-supplier" match="item" use="@supplier"/>
  <xsl:key name="supplier" match="supplier" use="@id"/>
  <xsl:key name="by-tag" match="tag" use="."/>
  <xsl:template match="/catalogue">
    <report items="{count(item)}">
      <categories>
        <xsl:for-each select="item[generate-id() = generate-id(key('by-category', @category)[1])]">
          <xsl:sort select="@category"/>
          <xsl:variable name="group" select="key('by-category', @category)"/>
          <category name="{@category}" count="{count($group)}"
                    stock="{sum($group/stock)}" value="{format-number(sum($group/price), '0.00')}">
            <xsl:for-each select="$group">
              <xsl:sort select="price" data-type="number" order="descending"/>
              <xsl:sort select="@sku"/>
              <xsl:if test="position() &lt;= 25">
                <item sku="{@sku}" price="{price}" supplier="{key('supplier', @supplier)/name}">
                  <xsl:value-of select="translate(title, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')"/>
                </item>
              </xsl:if>
            </xsl:for-each>
          </category>
        </xsl:for-each>
      </categories>
      <suppliers>
        <xsl:for-each select="supplier">
          <xsl:sort select="count(key('by-supplier', @id))" data-type="number" order="descending"/>
          <xsl:sort select="@id"/>
          <xsl:variable name="mine" select="key('by-supplier', @id)"/>
          <supplier id="{@id}" country="{@country}" items="{count($mine)}">
            <xsl:for-each select="$mine">
              <xsl:sort select="price" data-type="number"/>
              <xsl:sort select="@sku"/>
              <xsl:if test="position() = 1"><xsl:attribute name="cheapest"><xsl:value-of select="@sku"/></xsl:attribute></xsl:if>
            </xsl:for-each>
          </supplier>
        </xsl:for-each>
      </suppliers>
      <tags>
        <xsl:for-each select="item/tags/tag[generate-id() = generate-id(key('by-tag', .)[1])]">
          <xsl:sort select="."/>
          <tag name="{.}" uses="{count(key('by-tag', .))}"/>
        </xsl:for-each>
      </tags>
    </report>
  </xsl:template>
</xsl:stylesheet>
`

// genSQL writes an H2 script: schema, bulk inserts as individual statements (parsing is part of
// the work), joins, grouping, updates and deletes, and results exported with CSVWRITE into the
// working directory so the check reads files rather than a console the modes may write to.
func genSQL(dir string, customers, orders int) error {
	r := genRand(6002)
	var b strings.Builder
	b.WriteString(`CREATE TABLE customer(id INT PRIMARY KEY, name VARCHAR(64), region VARCHAR(16), tier INT);
CREATE TABLE product(id INT PRIMARY KEY, title VARCHAR(80), price DECIMAL(10,2), category VARCHAR(16));
CREATE TABLE orders(id INT PRIMARY KEY, customer_id INT, product_id INT, qty INT, odate INT, status VARCHAR(12));
CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX orders_product ON orders(product_id);
`)
	regions := []string{"north", "south", "east", "west", "central"}
	for i := 0; i < customers; i++ {
		fmt.Fprintf(&b, "INSERT INTO customer VALUES(%d, '%s %s', '%s', %d);\n", i, pick(r, words), pick(r, words), pick(r, regions), r.Intn(4))
	}
	products := customers / 4
	if products < 10 {
		products = 10
	}
	cats := []string{"tools", "food", "books", "toys", "garden", "office"}
	for i := 0; i < products; i++ {
		fmt.Fprintf(&b, "INSERT INTO product VALUES(%d, '%s', %d.%02d, '%s');\n", i, sentence(r, 3), 1+r.Intn(300), r.Intn(100), pick(r, cats))
	}
	status := []string{"new", "paid", "shipped", "returned"}
	for i := 0; i < orders; i++ {
		fmt.Fprintf(&b, "INSERT INTO orders VALUES(%d, %d, %d, %d, %d, '%s');\n", i, r.Intn(customers), r.Intn(products), 1+r.Intn(9), r.Intn(365), pick(r, status))
	}
	b.WriteString(`UPDATE orders SET status = 'shipped' WHERE status = 'paid' AND odate < 200;
UPDATE product SET price = price * 1.05 WHERE category IN ('tools', 'garden');
UPDATE customer SET tier = tier + 1 WHERE id IN (SELECT customer_id FROM orders GROUP BY customer_id HAVING SUM(qty) > 40);
DELETE FROM orders WHERE status = 'returned' AND odate > 300;
DELETE FROM customer WHERE id NOT IN (SELECT DISTINCT customer_id FROM orders);
CREATE TABLE revenue AS SELECT c.region, p.category, COUNT(*) AS n, SUM(o.qty * p.price) AS total
  FROM orders o JOIN customer c ON c.id = o.customer_id JOIN product p ON p.id = o.product_id
  GROUP BY c.region, p.category;
CALL CSVWRITE('revenue.csv', 'SELECT * FROM revenue ORDER BY region, category');
CALL CSVWRITE('top-customers.csv', 'SELECT c.id, c.name, c.tier, SUM(o.qty * p.price) AS spent, COUNT(DISTINCT o.product_id) AS kinds FROM customer c JOIN orders o ON o.customer_id = c.id JOIN product p ON p.id = o.product_id GROUP BY c.id, c.name, c.tier ORDER BY spent DESC, c.id LIMIT 200');
CALL CSVWRITE('monthly.csv', 'SELECT odate / 30 AS period, status, COUNT(*), SUM(qty), MIN(product_id), MAX(product_id) FROM orders GROUP BY odate / 30, status ORDER BY period, status');
CALL CSVWRITE('products.csv', 'SELECT p.id, p.price, (SELECT COUNT(*) FROM orders o WHERE o.product_id = p.id) AS sold FROM product p ORDER BY sold DESC, p.id');
CALL CSVWRITE('counts.csv', 'SELECT (SELECT COUNT(*) FROM customer), (SELECT COUNT(*) FROM orders), (SELECT SUM(qty) FROM orders), (SELECT COUNT(*) FROM revenue)');
`)
	return writeFile(filepath.Join(dir, "workload.sql"), b.String())
}

// genJavaTree writes a source tree for ecj: generic containers, lambdas, inner and anonymous
// classes, switches and string concatenation, across packages that import each other, so type
// inference and flow analysis get real work. It returns the number of class files a correct
// compilation produces (top-level, member, local and anonymous classes), which the check
// compares against what ecj wrote.
func genJavaTree(dir string, packages, classesPerPackage int) (int, error) {
	for p := 0; p < packages; p++ {
		for c := 0; c < classesPerPackage; c++ {
			var b strings.Builder
			fmt.Fprintf(&b, "package gen.p%d;\n\nimport java.util.*;\nimport java.util.function.*;\nimport java.util.stream.*;\n", p)
			fmt.Fprintf(&b, `
public class C%[1]d<T extends Comparable<T>> implements Iterable<T> {
    private final List<T> items = new ArrayList<>();
    private final Map<String, List<T>> index = new HashMap<>();

    public interface Visitor<R> { R visit(int depth, String label); }

    public static final class Node<K, V> {
        final K key; V value; Node<K, V> next;
        Node(K key, V value, Node<K, V> next) { this.key = key; this.value = value; this.next = next; }
        <R> R fold(R seed, BiFunction<R, V, R> f) {
            R acc = seed;
            for (Node<K, V> n = this; n != null; n = n.next) acc = f.apply(acc, n.value);
            return acc;
        }
    }

    public void add(T item, String label) {
        items.add(item);
        index.computeIfAbsent(label, k -> new ArrayList<>()).add(item);
    }

    public Optional<T> max() { return items.stream().max(Comparator.naturalOrder()); }

    public Map<Boolean, Long> partition(Predicate<? super T> p) {
        return items.stream().collect(Collectors.partitioningBy(p, Collectors.counting()));
    }

    @Override public Iterator<T> iterator() {
        return new Iterator<T>() {
            private int i;
            @Override public boolean hasNext() { return i < items.size(); }
            @Override public T next() { return items.get(i++); }
        };
    }

    public static String describe(int code) {
        switch (code %% 7) {
            case 0: return "zero:" + code;
            case 1: return "one:" + code + ":" + (code * 31);
            case 2: case 3: return "few:" + Integer.toHexString(code);
            default:
                StringBuilder sb = new StringBuilder();
                for (int k = 0; k < code %% 5; k++) sb.append(k).append(',');
                return sb.toString();
        }
    }

    public static <A, B> List<B> mapAll(Collection<A> in, Function<? super A, ? extends B> f) {
        List<B> out = new ArrayList<>(in.size());
        for (A a : in) out.add(f.apply(a));
        return out;
    }

    public int walk(Visitor<Integer> v, int depth) {
        class Local { int total; void bump(int x) { total += x; } }
        Local l = new Local();
        for (int d = 0; d < depth; d++) l.bump(v.visit(d, describe(d)));
        return l.total;
    }
`, c)
			for m := 0; m < 6; m++ {
				fmt.Fprintf(&b, `
    public long method%[1]d(int n, String s) {
        long acc = %[2]d;
        Map<String, Integer> seen = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            String k = s + "-" + (i %% %[3]d) + "-" + describe(i);
            seen.merge(k, 1, Integer::sum);
            if (i %% 3 == 0 && seen.get(k) > 1) { acc += k.length(); } else if (i %% 5 == 1) { acc ^= k.hashCode(); } else { acc -= i; }
        }
        List<String> keys = mapAll(seen.keySet(), String::toUpperCase);
        acc += keys.stream().filter(x -> x.length() > %[3]d).mapToInt(String::length).sum();
        Function<Integer, Node<String, Integer>> mk = x -> new Node<>("n" + x, x, null);
        acc += mk.apply(n).fold(0L, (a, b) -> a + b);
        return acc;
    }
`, m, r32(p, c, m), 3+m)
			}
			if p > 0 {
				fmt.Fprintf(&b, `
    public long crossPackage() {
        gen.p%[1]d.C%[2]d<String> other = new gen.p%[1]d.C%[2]d<>();
        other.add("x", "label");
        other.add("y", "label");
        long total = 0;
        for (String s : other) total += s.length() + other.method0(4, s);
        return total + other.partition(s -> s.startsWith("x")).getOrDefault(true, 0L);
    }
`, p-1, c)
			}
			b.WriteString("}\n")
			path := filepath.Join(dir, "src", "gen", fmt.Sprintf("p%d", p), fmt.Sprintf("C%d.java", c))
			if err := writeFile(path, b.String()); err != nil {
				return 0, err
			}
		}
	}
	return javaTreeClassFiles(packages, classesPerPackage), nil
}

// javaTreeClassFiles is how many class files genJavaTree's sources compile to: per class C, its
// member types Visitor and Node, the anonymous Iterator and the local class Local.
func javaTreeClassFiles(packages, classesPerPackage int) int { return packages * classesPerPackage * 5 }

// r32 gives each generated method a different constant so no two method bodies are identical.
func r32(p, c, m int) int { return (p*7919 + c*104729 + m*31) % 100003 }

// genLuceneDocs writes plain-text documents for the Lucene demo's IndexFiles, and a query file
// for SearchFiles covering term, boolean, phrase and prefix queries.
func genLuceneDocs(dir string, docs, wordsPerDoc int) error {
	r := genRand(6004)
	for d := 0; d < docs; d++ {
		var b strings.Builder
		for i := 0; i < wordsPerDoc; i++ {
			// A skewed word choice makes term frequencies Zipf-like, as in real text.
			w := words[int(float64(len(words))*r.Float64()*r.Float64())]
			b.WriteString(w)
			if i%12 == 11 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		path := filepath.Join(dir, "docs", fmt.Sprintf("d%03d", d/100), fmt.Sprintf("doc%05d.txt", d))
		if err := writeFile(path, b.String()); err != nil {
			return err
		}
	}
	var q strings.Builder
	for i := 0; i < 400; i++ {
		switch i % 5 {
		case 0:
			q.WriteString(pick(r, words))
		case 1:
			fmt.Fprintf(&q, "+%s +%s", pick(r, words), pick(r, words))
		case 2:
			fmt.Fprintf(&q, "\"%s %s\"", pick(r, words), pick(r, words))
		case 3:
			fmt.Fprintf(&q, "%s*", pick(r, words)[:2])
		case 4:
			fmt.Fprintf(&q, "%s OR %s -%s", pick(r, words), pick(r, words), pick(r, words))
		}
		q.WriteByte('\n')
	}
	return writeFile(filepath.Join(dir, "queries.txt"), q.String())
}

// genFO writes an XSL-FO document with tables, lists, inline formatting and footnotes: the
// layout engine's line breaking and table code dominate FOP's allocation.
func genFO(dir string, sections int) error {
	r := genRand(6005)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<fo:root xmlns:fo="http://www.w3.org/1999/XSL/Format">
  <fo:layout-master-set>
    <fo:simple-page-master master-name="page" page-height="29.7cm" page-width="21cm" margin="2cm">
      <fo:region-body margin-bottom="1.5cm"/>
      <fo:region-after extent="1cm"/>
    </fo:simple-page-master>
  </fo:layout-master-set>
  <fo:page-sequence master-reference="page">
    <fo:static-content flow-name="xsl-region-after">
      <fo:block text-align="center" font-size="8pt">Page <fo:page-number/></fo:block>
    </fo:static-content>
    <fo:flow flow-name="xsl-region-body">
`)
	for s := 0; s < sections; s++ {
		fmt.Fprintf(&b, "      <fo:block font-size=\"16pt\" font-weight=\"bold\" space-before=\"12pt\" keep-with-next=\"always\">Section %d: %s</fo:block>\n", s+1, sentence(r, 3))
		for p := 0; p < 3; p++ {
			fmt.Fprintf(&b, "      <fo:block text-align=\"justify\" space-before=\"6pt\">%s <fo:inline font-style=\"italic\">%s</fo:inline> %s<fo:footnote><fo:inline baseline-shift=\"super\" font-size=\"7pt\">%d</fo:inline><fo:footnote-body><fo:block font-size=\"7pt\">%s</fo:block></fo:footnote-body></fo:footnote> %s.</fo:block>\n",
				sentence(r, 40+r.Intn(40)), sentence(r, 5), sentence(r, 30), s*3+p+1, sentence(r, 10), sentence(r, 20))
		}
		b.WriteString("      <fo:table table-layout=\"fixed\" width=\"100%\" border=\"0.5pt solid black\" space-before=\"6pt\">\n")
		b.WriteString("        <fo:table-column column-width=\"20%\"/><fo:table-column column-width=\"50%\"/><fo:table-column column-width=\"30%\"/>\n        <fo:table-body>\n")
		for row := 0; row < 12; row++ {
			fmt.Fprintf(&b, "          <fo:table-row><fo:table-cell border=\"0.5pt solid black\"><fo:block>%d.%d</fo:block></fo:table-cell><fo:table-cell border=\"0.5pt solid black\"><fo:block>%s</fo:block></fo:table-cell><fo:table-cell border=\"0.5pt solid black\"><fo:block text-align=\"end\">%d.%02d</fo:block></fo:table-cell></fo:table-row>\n",
				s+1, row+1, sentence(r, 4+r.Intn(8)), r.Intn(10000), r.Intn(100))
		}
		b.WriteString("        </fo:table-body>\n      </fo:table>\n      <fo:list-block space-before=\"6pt\">\n")
		for li := 0; li < 5; li++ {
			fmt.Fprintf(&b, "        <fo:list-item><fo:list-item-label end-indent=\"label-end()\"><fo:block>&#x2022;</fo:block></fo:list-item-label><fo:list-item-body start-indent=\"body-start()\"><fo:block>%s</fo:block></fo:list-item-body></fo:list-item>\n", sentence(r, 12))
		}
		b.WriteString("      </fo:list-block>\n")
	}
	b.WriteString("    </fo:flow>\n  </fo:page-sequence>\n</fo:root>\n")
	return writeFile(filepath.Join(dir, "document.fo"), b.String())
}

// genSVG writes SVG drawings with gradients, paths, transforms, opacity and text: Batik's
// GVT tree and the rasterizer's paint pipeline are what gets exercised.
func genSVG(dir string, files, shapes int) error {
	r := genRand(6006)
	for f := 0; f < files; f++ {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480" viewBox="0 0 640 480">
  <defs>
    <linearGradient id="g1" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#1b4f72"/><stop offset="1" stop-color="#f5b041"/></linearGradient>
    <radialGradient id="g2"><stop offset="0" stop-color="#ffffff" stop-opacity="0.9"/><stop offset="1" stop-color="#884ea0" stop-opacity="0.2"/></radialGradient>
  </defs>
  <rect width="640" height="480" fill="url(#g1)"/>
`)
		for s := 0; s < shapes; s++ {
			x, y := r.Intn(640), r.Intn(480)
			fill := fmt.Sprintf("#%02x%02x%02x", r.Intn(256), r.Intn(256), r.Intn(256))
			switch s % 4 {
			case 0:
				fmt.Fprintf(&b, "  <circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"url(#g2)\" stroke=\"%s\" stroke-width=\"2\"/>\n", x, y, 5+r.Intn(60), fill)
			case 1:
				fmt.Fprintf(&b, "  <path d=\"M%d %d C %d %d, %d %d, %d %d S %d %d, %d %d Z\" fill=\"%s\" fill-opacity=\"0.6\"/>\n",
					x, y, r.Intn(640), r.Intn(480), r.Intn(640), r.Intn(480), r.Intn(640), r.Intn(480), r.Intn(640), r.Intn(480), r.Intn(640), r.Intn(480), fill)
			case 2:
				fmt.Fprintf(&b, "  <rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" transform=\"rotate(%d %d %d)\" fill=\"%s\" opacity=\"0.7\"/>\n",
					x, y, 10+r.Intn(120), 10+r.Intn(90), r.Intn(360), x, y, fill)
			case 3:
				fmt.Fprintf(&b, "  <text x=\"%d\" y=\"%d\" font-family=\"sans-serif\" font-size=\"%d\" fill=\"%s\" transform=\"skewX(%d)\">%s</text>\n",
					x, y, 8+r.Intn(24), fill, r.Intn(30)-15, sentence(r, 2))
			}
		}
		b.WriteString("</svg>\n")
		if err := writeFile(filepath.Join(dir, "svg", fmt.Sprintf("drawing%03d.svg", f)), b.String()); err != nil {
			return err
		}
	}
	return nil
}
