//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Program is one short real program: the jars that hold its code (what the offline rewrite
// rewrites and the agent sees unmodified), its main class, what a user would account (its main
// packages, as `--accounts` patterns) and its input. Every program runs in a directory of its
// own with an empty out/ in it; what it writes there is part of its output.
type Program struct {
	Name     string
	What     string // for the table's notes
	Jars     []string
	Main     string
	Accounts []string
	// Input writes the program's input into dir and returns its arguments.
	Input func(dir string) ([]string, error)
}

// programs is every program in table order. Debian's packages provide them
// (scripts/install-deps.sh); a program whose jars are missing is reported and left out.
func programs() []*Program {
	const j = "/usr/share/java/"
	return []*Program{
		{Name: "ecj", What: "ecj (Debian libecj-java) compiling 40 generated classes, -1.8",
			Jars: []string{j + "ecj.jar"}, Main: "org.eclipse.jdt.internal.compiler.batch.Main",
			Accounts: []string{"org.eclipse.jdt.internal.compiler", "org.eclipse.jdt.internal.compiler.ast", "org.eclipse.jdt.internal.compiler.batch", "org.eclipse.jdt.internal.compiler.classfmt", "org.eclipse.jdt.internal.compiler.codegen", "org.eclipse.jdt.internal.compiler.flow", "org.eclipse.jdt.internal.compiler.lookup", "org.eclipse.jdt.internal.compiler.parser", "org.eclipse.jdt.internal.compiler.problem", "org.eclipse.jdt.internal.compiler.util"},
			Input:    ecjInput},
		{Name: "groovy", What: "a Groovy 2.4 script (Debian groovy: groovy-all.jar, groovy.ui.GroovyMain): orders grouped and summed, words counted, JSON built",
			Jars: []string{j + "groovy-all.jar"}, Main: "groovy.ui.GroovyMain",
			Accounts: []string{"groovy.lang", "groovy.util", "groovy.json.*", "org.codehaus.groovy.runtime.*", "org.codehaus.groovy.reflection.*", "org.codehaus.groovy.control.*", "org.codehaus.groovy.classgen.*", "org.codehaus.groovy.ast.*", "org.codehaus.groovy.vmplugin.*", "org.codehaus.groovy.antlr.*", "groovyjarjarasm.*", "groovyjarjarantlr.*"},
			Input:    scriptInput("orders.groovy", groovyScript)},
		{Name: "clojure", What: "a Clojure 1.11 script (Debian libclojure-java, clojure.main): the same orders and words",
			Jars: []string{j + "clojure.jar", "/usr/share/maven-repo/org/clojure/spec.alpha/debian/spec.alpha-debian.jar",
				"/usr/share/maven-repo/org/clojure/core.specs.alpha/debian/core.specs.alpha-debian.jar"},
			Main:     "clojure.main",
			Accounts: []string{"clojure.lang", "clojure", "clojure.core.*", "clojure.java.*", "clojure.spec.*", "clojure.asm.*"},
			Input:    scriptInput("orders.clj", clojureScript)},
		{Name: "scalac", What: "the Scala 2.11 compiler (Debian scala, scala.tools.nsc.Main) on a 4-file project",
			Jars: []string{j + "scala-compiler.jar", j + "scala-library.jar", j + "scala-reflect.jar"}, Main: "scala.tools.nsc.Main",
			Accounts: []string{"scala", "scala.runtime", "scala.collection.*", "scala.reflect.internal.*", "scala.reflect.io", "scala.tools.nsc", "scala.tools.nsc.ast.*", "scala.tools.nsc.backend.*", "scala.tools.nsc.symtab.*", "scala.tools.nsc.transform.*", "scala.tools.nsc.typechecker", "scala.tools.nsc.util"},
			Input:    scalaInput},
		{Name: "h2", What: "H2's RunScript (Debian libh2-java) on jdbc:h2:mem: tables filled, joined, grouped, written as CSV (the suite's h2 workload, small)",
			Jars: []string{j + "h2.jar"}, Main: "org.h2.tools.RunScript",
			Accounts: []string{"org.h2.command.*", "org.h2.engine", "org.h2.expression.*", "org.h2.index", "org.h2.mvstore.*", "org.h2.result", "org.h2.store.*", "org.h2.table", "org.h2.tools", "org.h2.util.*", "org.h2.value"},
			Input:    h2Input},
	}
}

// missingJar names the first jar of p that is not installed.
func (p *Program) missingJar() string {
	for _, j := range p.Jars {
		if _, err := os.Stat(j); err != nil {
			return j
		}
	}
	return ""
}

func scriptInput(name, text string) func(string) ([]string, error) {
	return func(dir string) ([]string, error) {
		p := filepath.Join(dir, name)
		return []string{p}, os.WriteFile(p, []byte(text), 0o644)
	}
}

const groovyScript = `class Order { String customer; int qty; BigDecimal price }
def rnd = new Random(42)
def orders = (1..5000).collect { new Order(customer: "c${it % 97}", qty: rnd.nextInt(10) + 1,
    price: new BigDecimal(rnd.nextInt(10000)).movePointLeft(2)) }
def byCustomer = orders.groupBy { it.customer }.collectEntries { k, v -> [k, v.sum { it.qty * it.price }] }
byCustomer.sort { a, b -> b.value <=> a.value ?: a.key <=> b.key }.take(5).each { k, v -> println "$k $v" }
println orders.count { it.qty > 5 }
def words = (1..2000).collect { "w${(it * 7) % 37}" }.join(' ').tokenize()
println words.countBy { it }.sort { a, b -> b.value <=> a.value ?: a.key <=> b.key }.take(3)
println new groovy.json.JsonBuilder([orders: orders.size(), customers: byCustomer.size()]).toString()
`

const clojureScript = `(require '[clojure.string :as str])
(def rnd (java.util.Random. 42))
(def orders (vec (for [i (range 1 5001)]
  {:customer (str "c" (mod i 97)) :qty (inc (.nextInt rnd 10)) :price (/ (.nextInt rnd 10000) 100M)})))
(def by-customer (into {} (for [[k v] (group-by :customer orders)] [k (reduce + (map #(* (:qty %) (:price %)) v))])))
(doseq [[k v] (take 5 (sort-by (fn [[k v]] [(- v) k]) by-customer))] (println k v))
(println (count (filter #(> (:qty %) 5) orders)))
(def words (str/split (str/join " " (map #(str "w" (mod (* % 7) 37)) (range 1 2001))) #" "))
(println (take 3 (sort-by (fn [[k v]] [(- v) k]) (frequencies words))))
`

// ecjInput writes 40 classes in 4 packages, each using generics, a lambda, an inner class and
// the class before it, so the compiler resolves types across files and packages.
func ecjInput(dir string) ([]string, error) {
	src := filepath.Join(dir, "src")
	for i := 0; i < 40; i++ {
		pkg := fmt.Sprintf("gen.p%d", i%4)
		var dep string
		if i > 0 {
			dep = fmt.Sprintf("gen.p%d.C%d", (i-1)%4, i-1)
		}
		body := fmt.Sprintf(`package %s;

import java.util.*;
import java.util.function.*;
import java.util.stream.*;

public class C%[2]d<T extends Comparable<T>> implements Comparable<C%[2]d<T>> {
    private final List<T> items = new ArrayList<>();
    private final Map<String, Integer> counts = new TreeMap<>();

    public C%[2]d<T> add(T item) { items.add(item); counts.merge(String.valueOf(item), 1, Integer::sum); return this; }

    public Optional<T> max() { return items.stream().max(Comparator.naturalOrder()); }

    public <R> List<R> map(Function<? super T, ? extends R> f) { return items.stream().map(f).collect(Collectors.toList()); }

    public int compareTo(C%[2]d<T> o) { return Integer.compare(items.size(), o.items.size()); }

    class Cursor implements Iterator<T> {
        int at;
        public boolean hasNext() { return at < items.size(); }
        public T next() { return items.get(at++); }
    }

    public Iterator<T> cursor() { return new Cursor(); }

    public static String describe(int n) {
        StringBuilder sb = new StringBuilder();
        switch (n %% 3) {
        case 0: sb.append("zero"); break;
        case 1: sb.append("one"); break;
        default: sb.append("many");
        }
        %[3]s
        return sb.toString();
    }
}
`, pkg, i, depUse(dep))
		path := filepath.Join(src, strings.ReplaceAll(pkg, ".", "/"), fmt.Sprintf("C%d.java", i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	return []string{"-1.8", "-nowarn", "-encoding", "UTF-8", "-d", "out", src}, nil
}

func depUse(dep string) string {
	if dep == "" {
		return ""
	}
	return fmt.Sprintf(`%s<String> d = new %[1]s<>();
        d.add("a").add(String.valueOf(n));
        sb.append(d.max().orElse("")).append(%[1]s.describe(n - 1).length());`, dep)
}

var scalaFiles = map[string]string{
	"Model.scala": `package shop
sealed trait Event { def at: Long }
case class Ordered(customer: String, sku: String, qty: Int, at: Long) extends Event
case class Cancelled(orderAt: Long, at: Long) extends Event
case class Price(sku: String, cents: Long)
object Money { implicit class Cents(val c: Long) extends AnyVal { def show: String = f"${c / 100}%d.${c % 100}%02d" } }
`,
	"Parse.scala": `package shop
object Parse {
  def line(s: String): Option[Event] = s.split(',').toList match {
    case "o" :: c :: sku :: q :: t :: Nil => Some(Ordered(c, sku, q.toInt, t.toLong))
    case "x" :: o :: t :: Nil => Some(Cancelled(o.toLong, t.toLong))
    case _ => None
  }
  def all(lines: Seq[String]): Seq[Event] = lines.flatMap(line)
}
`,
	"Report.scala": `package shop
import Money._
class Report(prices: Map[String, Price]) {
  def revenue(events: Seq[Event]): Map[String, Long] = {
    val cancelled = events.collect { case Cancelled(o, _) => o }.toSet
    events.collect { case o: Ordered if !cancelled(o.at) => o }
      .groupBy(_.customer)
      .map { case (c, os) => c -> os.map(o => prices.get(o.sku).map(_.cents * o.qty).getOrElse(0L)).sum }
  }
  def top(events: Seq[Event], n: Int): Seq[String] =
    revenue(events).toSeq.sortBy { case (c, r) => (-r, c) }.take(n).map { case (c, r) => s"$c ${r.show}" }
}
`,
	"Main.scala": `package shop
object Main {
  def main(args: Array[String]): Unit = {
    val prices = (1 to 20).map(i => Price(s"sku$i", i * 125L)).map(p => p.sku -> p).toMap
    val lines = (1 to 500).map(i => if (i % 11 == 0) s"x,${i - 1},$i" else s"o,c${i % 13},sku${i % 20 + 1},${i % 4 + 1},$i")
    new Report(prices).top(Parse.all(lines), 5).foreach(println)
  }
}
`,
}

// scalaInput writes the project and compiles it against the installed scala-library.jar (not
// the class path scalac runs on, which the offline mode rewrites).
func scalaInput(dir string) ([]string, error) {
	args := []string{"-classpath", "/usr/share/java/scala-library.jar", "-d", "out"}
	for _, name := range []string{"Model.scala", "Parse.scala", "Report.scala", "Main.scala"} {
		p := filepath.Join(dir, "src", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(scalaFiles[name]), 0o644); err != nil {
			return nil, err
		}
		args = append(args, p)
	}
	return args, nil
}

// h2Input writes a script that fills two tables (generated rows and a few hundred literal
// INSERTs, so the parser runs too), joins and groups them and writes the results into out/.
func h2Input(dir string) ([]string, error) {
	var b strings.Builder
	b.WriteString(`CREATE TABLE customer(id INT PRIMARY KEY, name VARCHAR(40), region VARCHAR(10));
CREATE TABLE orders(id INT PRIMARY KEY, customer INT, qty INT, cents BIGINT, d DATE);
INSERT INTO customer SELECT X, 'customer ' || X, 'r' || MOD(X, 7) FROM SYSTEM_RANGE(1, 500);
INSERT INTO orders SELECT X, MOD(X * 7919, 500) + 1, MOD(X, 9) + 1, MOD(X * 31, 10000), DATEADD('DAY', MOD(X, 365), DATE '2025-01-01') FROM SYSTEM_RANGE(1, 8000);
`)
	for i := 8001; i <= 8300; i++ {
		fmt.Fprintf(&b, "INSERT INTO orders VALUES(%d, %d, %d, %d, DATE '2025-%02d-%02d');\n", i, i%500+1, i%5+1, (i*17)%9000, i%12+1, i%28+1)
	}
	b.WriteString(`CREATE INDEX orders_customer ON orders(customer);
UPDATE orders SET cents = cents + 100 WHERE qty > 7;
DELETE FROM orders WHERE MOD(id, 50) = 0;
CALL CSVWRITE('out/revenue.csv', 'SELECT c.region, SUM(o.qty * o.cents) AS revenue, COUNT(*) AS n FROM orders o JOIN customer c ON c.id = o.customer GROUP BY c.region ORDER BY c.region');
CALL CSVWRITE('out/top.csv', 'SELECT c.name, SUM(o.qty * o.cents) AS revenue FROM orders o JOIN customer c ON c.id = o.customer GROUP BY c.name ORDER BY revenue DESC, c.name LIMIT 20');
CALL CSVWRITE('out/monthly.csv', 'SELECT MONTH(d) AS m, COUNT(*), AVG(cents) FROM orders GROUP BY MONTH(d) ORDER BY m');
`)
	p := filepath.Join(dir, "script.sql")
	return []string{"-url", "jdbc:h2:mem:startup", "-user", "sa", "-script", p}, os.WriteFile(p, []byte(b.String()), 0o644)
}
