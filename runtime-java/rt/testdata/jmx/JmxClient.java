import com.sun.tools.attach.VirtualMachine;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * A JMX client from outside the process, as an operator's would be: attaches to PID, starts the
 * JVM's local management agent, connects, waits up to WAIT_MS for heapledger:type=Ledger, then
 * runs the steps and prints one line each:
 *   get:ATTR        ATTR=value
 *   snapshot        snapshot=file
 *   heapDump:PATH   heapDump=file
 * A failed step prints "STEP!exception-message" and the client goes on. A bean that never
 * appears prints "absent" and exits 3.
 *
 * usage: JmxClient PID WAIT_MS STEP...
 */
public class JmxClient {
    public static void main(String[] args) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(address));
        try {
            MBeanServerConnection s = c.getMBeanServerConnection();
            ObjectName name = new ObjectName("heapledger:type=Ledger");
            long deadline = System.currentTimeMillis() + Long.parseLong(args[1]);
            while (!s.isRegistered(name)) {
                if (System.currentTimeMillis() > deadline) {
                    System.out.println("absent");
                    System.exit(3);
                }
                Thread.sleep(50);
            }
            for (int i = 2; i < args.length; i++) {
                String step = args[i];
                try {
                    if (step.startsWith("get:")) {
                        String attr = step.substring(4);
                        System.out.println(attr + "=" + s.getAttribute(name, attr));
                    } else if (step.equals("snapshot")) {
                        System.out.println("snapshot=" + s.invoke(name, "snapshot", new Object[0], new String[0]));
                    } else if (step.startsWith("heapDump:")) {
                        Object f = s.invoke(name, "heapDump", new Object[] {step.substring(9)}, new String[] {String.class.getName()});
                        System.out.println("heapDump=" + f);
                    } else {
                        throw new IllegalArgumentException("unknown step " + step);
                    }
                } catch (Exception e) {
                    Throwable t = e;
                    while (t.getCause() != null) t = t.getCause();
                    System.out.println(step + "!" + t.getMessage());
                }
            }
        } finally {
            c.close();
        }
    }
}
