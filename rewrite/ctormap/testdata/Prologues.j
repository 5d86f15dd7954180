; Code before super() the way Kotlin and Scala compile it, and a constructor that calls the same
; superclass constructor on two paths.
.class public Prologues
.super java/lang/Object
.field private final name Ljava/lang/String;

; Kotlin: the parameter is null-checked by a static call and a field is stored on the
; uninitialized this before super().
.method public <init>(Ljava/lang/String;)V
    .limit stack 3
    .limit locals 2
    aload_1
    ldc "name"
    invokestatic java/util/Objects/requireNonNull(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/Object;
    pop
    aload_0
    aload_1
    putfield Prologues/name Ljava/lang/String;
    aload_0
    invokespecial java/lang/Object/<init>()V
    return
.end method

; Scala-style explicit null check that throws before super(), then the same super() reached on
; two paths after a branch on the argument.
.method public <init>(Ljava/lang/String;Z)V
    .limit stack 3
    .limit locals 3
    aload_1
    ifnonnull Checked
    new java/lang/NullPointerException
    dup
    invokespecial java/lang/NullPointerException/<init>()V
    athrow
Checked:
    aload_0
    aload_1
    putfield Prologues/name Ljava/lang/String;
    iload_2
    ifeq Other
    aload_0
    invokespecial java/lang/Object/<init>()V
    goto Done
Other:
    aload_0
    invokespecial java/lang/Object/<init>()V
Done:
    return
.end method
