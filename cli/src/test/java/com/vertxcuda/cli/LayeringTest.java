package com.vertxcuda.cli;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SliceRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layers of the toolkit's main classes, read from every module on this module's class path
 * (client, device, libraries, samples, bench): an SPI or a codec package never reaches into an
 * implementation package, and what other modules share of an implementation ({@code internal},
 * {@code device.memory}) does not lean back on it; no package cycle, but an API package and its own
 * {@code impl}.
 */
class LayeringTest {

  private static JavaClasses classes;

  @BeforeAll
  static void read() {
    classes = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("com.vertxcuda");
    assertTrue(classes.contain("com.vertxcuda.codec.CudaCodecs"), "the client module's classes are read");
    assertTrue(classes.contain("com.vertxcuda.device.spi.DeviceContext"), "the device module's classes are read");
  }

  @Test
  void noSpiOrCodecPackageDependsOnAnImplementationPackage() {
    ArchRule rule = noClasses()
      .that().resideInAnyPackage("..spi..", "..codec..").and().resideOutsideOfPackage("..impl..")
      .should().dependOnClassesThat().resideInAPackage("..impl..");
    rule.check(classes);
  }

  @Test
  void theCodecsImplementationDependsOnNoOtherImplementationPackage() {
    ArchRule rule = noClasses()
      .that().resideInAPackage("com.vertxcuda.codec.impl")
      .should().dependOnClassesThat(resideInAPackage("..impl..").and(not(resideInAPackage("com.vertxcuda.codec.impl"))));
    rule.check(classes);
  }

  @Test
  void whatOtherModulesShareOfTheClientDoesNotDependOnItsImplementation() {
    noClasses().that().resideInAPackage("com.vertxcuda.internal")
      .should().dependOnClassesThat().resideInAPackage("com.vertxcuda.impl")
      .check(classes);
  }

  @Test
  void theHostMemoryOfTransfersDoesNotDependOnTheDeviceImplementation() {
    noClasses().that().resideInAPackage("com.vertxcuda.device.memory")
      .should().dependOnClassesThat().resideInAPackage("com.vertxcuda.device.impl")
      .check(classes);
  }

  /**
   * No package cycle inside a module (a cycle across modules cannot be built). The one exception: an
   * API package names its own {@code impl} (a static factory, a facade's delegate), so an arrow from
   * {@code X} to {@code X.impl} is not counted; every other arrow is.
   */
  @Test
  void noPackageCycleButAnApiPackageAndItsOwnImpl() {
    SliceRule rule = slices().assignedFrom(PACKAGES).should().beFreeOfCycles();
    Set<String> impls = new TreeSet<>();
    classes.forEach(c -> {
      if (c.getPackageName().endsWith(".impl")) {
        impls.add(c.getPackageName());
      }
    });
    for (String impl : impls) {
      String api = impl.substring(0, impl.length() - ".impl".length());
      rule = rule.ignoreDependency(resideInAPackage(api), resideInAPackage(impl));
    }
    rule.check(classes);
  }

  /** Each package of the toolkit is a slice of its own. */
  private static final SliceAssignment PACKAGES = new SliceAssignment() {
    @Override
    public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
      String p = javaClass.getPackageName();
      return p.equals("com.vertxcuda") || p.startsWith("com.vertxcuda.") ? SliceIdentifier.of(p) : SliceIdentifier.ignore();
    }

    @Override
    public String getDescription() {
      return "the packages of com.vertxcuda";
    }
  };
}
